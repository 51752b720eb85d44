"""SafePro files in and out: importing tasks and agent runs, exporting approved tasks."""

from __future__ import annotations

import tempfile

from django.conf import settings
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from authoring.exporters.safepro import safepro_json, safepro_zip
from authoring.forms import RunImportForm, TaskImportForm
from authoring.importers.safepro_source import SafeProSource
from authoring.services.imports import agent_runs_import, safepro_import
from curation.access import MANAGERS, ProjectAccess, project_view
from curation.errors import DomainError


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def task_import(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
    form = TaskImportForm(request.POST or None, request.FILES or None)
    report = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            report = safepro_import(
                actor=request.user,
                project=access.project,
                source=SafeProSource.from_upload(upload.name, upload),
                state=form.cleaned_data["state"],
            )
        except DomainError as error:
            form.add_error("file", error.message)
    return _page(request, access, task_form=form, task_report=report)


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def run_import(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
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
def export_safepro(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
    response = HttpResponse(safepro_json(access.project), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{access.project.slug}-safepro.json"'
    return response


@require_GET
@project_view(MANAGERS)
def export_safepro_zip(request: HttpRequest, access: ProjectAccess) -> FileResponse:
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
    request: HttpRequest,
    access: ProjectAccess,
    task_form: TaskImportForm | None = None,
    run_form: RunImportForm | None = None,
    task_report: object = None,
    run_report: object = None,
) -> HttpResponse:
    context = {
        "project": access.project,
        "access": access,
        "task_form": task_form or TaskImportForm(),
        "run_form": run_form or RunImportForm(),
        "task_report": task_report,
        "run_report": run_report,
    }
    return render(request, "authoring/import.html", context)
