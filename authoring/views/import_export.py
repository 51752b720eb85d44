"""SafePro files in and out: importing tasks and agent runs, exporting approved tasks."""

from __future__ import annotations

import tempfile

from django.conf import settings
from django.http import FileResponse, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

from authoring.exporters.safepro import safepro_json, safepro_zip
from authoring.forms import RunImportForm, TaskImportForm
from authoring.services.import_jobs import task_import_create, task_import_liveness
from authoring.services.imports import agent_runs_import
from curation.access import MANAGERS, ProjectAccess, project_view
from curation.errors import DomainError
from curation.requests import AuthenticatedRequest

# Task imports listed on the page, newest first.
RECENT_IMPORTS = 10


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def task_import(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = TaskImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            job = task_import_create(
                actor=request.user,
                project=access.project,
                upload=form.cleaned_data["file"],
                state=form.cleaned_data["state"],
            )
        except DomainError as error:
            form.add_error("file", error.message)
        else:
            return redirect("authoring:task_import_detail", access.project.slug, job.pk)
    return _page(request, access, task_form=form)


@require_GET
# The same URL answers htmx's polls with the report alone: caches must keep the two apart.
@vary_on_headers("HX-Request")
@project_view(MANAGERS)
def task_import_detail(
    request: AuthenticatedRequest, access: ProjectAccess, import_id: int
) -> HttpResponse:
    job = get_object_or_404(access.project.task_imports.select_related("created_by"), pk=import_id)
    context = {
        "project": access.project,
        "access": access,
        "job": job,
        "liveness": task_import_liveness(job),
    }
    if not request.htmx:
        return render(request, "authoring/import_detail.html", context)
    response = render(request, "authoring/import_detail.html#job", context)
    if job.is_finished:
        # The report replaces the waiting line, and htmx stops polling.
        return HttpResponseStopPolling(response.content)
    return response


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def run_import(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = RunImportForm(request.POST or None, request.FILES or None)
    report = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        if upload.size > settings.IMPORT_MAX_FILE_BYTES:
            form.add_error(
                "file",
                f"The file is larger than the limit of {settings.IMPORT_MAX_FILE_BYTES:,} bytes.",
            )
        else:
            report = agent_runs_import(
                actor=request.user, project=access.project, name=upload.name, lines=upload
            )
    return _page(request, access, run_form=form, run_report=report)


@require_GET
@project_view(MANAGERS)
def export_safepro(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    response = HttpResponse(safepro_json(access.project), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{access.project.slug}-safepro.json"'
    return response


@require_GET
@project_view(MANAGERS)
def export_safepro_zip(request: AuthenticatedRequest, access: ProjectAccess) -> FileResponse:
    # On disk rather than in memory: reference files make the zip large.
    archive = tempfile.TemporaryFile()  # noqa: SIM115 (the response closes it)
    safepro_zip(access.project, archive)
    archive.seek(0)
    return FileResponse(
        archive,
        as_attachment=True,
        filename=f"{access.project.slug}-safepro.zip",
        content_type="application/zip",
    )


def _page(
    request: AuthenticatedRequest,
    access: ProjectAccess,
    task_form: TaskImportForm | None = None,
    run_form: RunImportForm | None = None,
    run_report: object = None,
) -> HttpResponse:
    context = {
        "project": access.project,
        "access": access,
        "task_form": task_form or TaskImportForm(),
        "run_form": run_form or RunImportForm(),
        "task_imports": access.project.task_imports.select_related("created_by")[:RECENT_IMPORTS],
        "run_report": run_report,
    }
    return render(request, "authoring/import.html", context)
