"""Exports: the project's records as a download."""

from __future__ import annotations

import tempfile

from django.http import FileResponse
from django.views.decorators.http import require_GET

from curation.access import MANAGERS, ProjectAccess, project_view
from curation.exporters.rjudge import rjudge_export_zip
from curation.requests import AuthenticatedRequest


@require_GET
@project_view(MANAGERS)
def export_rjudge(request: AuthenticatedRequest, access: ProjectAccess) -> FileResponse:
    # Built in a temporary file, not in memory: a large project makes a large zip. The file has
    # no name on disk and disappears when the response closes it.
    archive = tempfile.TemporaryFile()  # noqa: SIM115 (the response closes it)
    rjudge_export_zip(access.project, archive)
    archive.seek(0)
    return FileResponse(
        archive,
        as_attachment=True,
        filename=f"{access.project.slug}-rjudge.zip",
        content_type="application/zip",
    )
