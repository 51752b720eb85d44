"""Imports: the upload form with the project's past imports, and one import's report."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

from curation.access import MANAGERS, ProjectAccess, project_view
from curation.errors import DomainError
from curation.forms import ChangesForm, ImportForm
from curation.importers import PROBLEM_LIMIT
from curation.models import ImportBatch, RecordChange
from curation.record_diff import FieldChange, record_change_values
from curation.requests import AuthenticatedRequest
from curation.services.imports import import_batch_create, import_liveness, import_progress
from curation.services.record_changes import CHANGES_LISTED, record_changes_decide
from curation.services.record_deletion import import_undo, records_deletion_count

RECENT_BATCHES = 50


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def import_list(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
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
def import_detail(
    request: AuthenticatedRequest, access: ProjectAccess, batch_id: int
) -> HttpResponse:
    batch = get_object_or_404(
        access.project.import_batches.select_related("created_by"), pk=batch_id
    )
    context = {
        "project": access.project,
        "access": access,
        "batch": batch,
        "progress": import_progress(batch),
        "liveness": import_liveness(batch),
        "problem_limit": PROBLEM_LIMIT,
        "changes": _changes_with_values(batch),
        "changes_pending": batch.changes.filter(state=RecordChange.State.PENDING).exists(),
        "verdict_change_count": batch.changes.exclude(verdict_of="").count(),
        "created_left": batch.records.exists(),
    }
    if not request.htmx:
        return render(request, "curation/import_detail.html", context)
    response = render(request, "curation/import_detail.html#report", context)
    if batch.is_finished:
        # The finished report replaces the progress bar, and htmx stops polling.
        return HttpResponseStopPolling(response.content)
    return response


@require_POST
@project_view(MANAGERS)
def import_changes(
    request: AuthenticatedRequest, access: ProjectAccess, batch_id: int
) -> HttpResponse:
    batch = get_object_or_404(access.project.import_batches, pk=batch_id)
    form = ChangesForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("Say whether to take the new versions or keep the stored.")
    take = form.cleaned_data["decision"] == "take"
    try:
        count = record_changes_decide(actor=request.user, batch=batch, take=take)
    except DomainError as error:
        messages.error(request, error.message)
    else:
        done = "took the new version" if take else "kept the stored version"
        messages.success(request, f"You {done} of {count} record{pluralize(count)}.")
    return redirect("curation:import_detail", access.project.slug, batch.pk)


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def import_undo_view(
    request: AuthenticatedRequest, access: ProjectAccess, batch_id: int
) -> HttpResponse:
    """The records the import created: what goes with them shown, then deleted once confirmed."""
    batch = get_object_or_404(access.project.import_batches, pk=batch_id)
    if request.method == "POST":
        try:
            deleted = import_undo(actor=request.user, batch=batch)
        except DomainError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, f"Import undone: deleted {deleted.described()}.")
        return redirect("curation:import_detail", access.project.slug, batch.pk)
    context = {
        "project": access.project,
        "access": access,
        "batch": batch,
        "deletion": records_deletion_count(batch.records.all()),
    }
    return render(request, "curation/import_undo.html", context)


def _changes_with_values(batch: ImportBatch) -> list[tuple[RecordChange, list[FieldChange]]]:
    """The batch's first changes, each with its fields' values before and after."""
    changes = list(batch.changes.select_related("record", "decided_by")[:CHANGES_LISTED])
    values = record_change_values(changes)
    return [(change, values.get(change.pk, [])) for change in changes]
