"""Imports: the upload form with the project's past imports, and one import's report."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

from curation.access import MANAGERS, ProjectAccess, project_view
from curation.errors import DomainError
from curation.importers import PROBLEM_LIMIT
from curation.models import ImportFormat
from curation.services.imports import import_batch_create, import_progress

RECENT_BATCHES = 50


class ImportForm(forms.Form):
    file = forms.FileField(
        help_text="An R-Judge scenario file (.json), a zip of the data folder, or JSONL."
    )
    format = forms.ChoiceField(choices=ImportFormat.choices, initial=ImportFormat.AUTO)
    default_category = forms.CharField(
        required=False,
        max_length=100,
        help_text="For records that name no category and sit in no category folder.",
    )


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def import_list(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            batch = import_batch_create(
                actor=request.user,
                project=access.project,
                upload=data["file"],
                format=data["format"],
                default_category=data["default_category"],
            )
        except DomainError as error:
            form.add_error("file", error.message)
        else:
            return redirect("curation:import_detail", access.project.slug, batch.pk)
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "batches": access.project.import_batches.select_related("created_by")[:RECENT_BATCHES],
    }
    return render(request, "curation/imports.html", context)


@require_GET
# The same URL answers htmx's polls with the report alone: caches must keep the two apart.
@vary_on_headers("HX-Request")
@project_view(MANAGERS)
def import_detail(request: HttpRequest, access: ProjectAccess, batch_id: int) -> HttpResponse:
    batch = get_object_or_404(
        access.project.import_batches.select_related("created_by"), pk=batch_id
    )
    context = {
        "project": access.project,
        "access": access,
        "batch": batch,
        "progress": import_progress(batch),
        "problem_limit": PROBLEM_LIMIT,
    }
    if not request.htmx:
        return render(request, "curation/import_detail.html", context)
    response = render(request, "curation/import_detail.html#report", context)
    if batch.is_finished:
        # The finished report replaces the progress bar, and htmx stops polling.
        return HttpResponseStopPolling(response.content)
    return response
