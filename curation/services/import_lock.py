"""The lock that lets one import at a time write into a project."""

from __future__ import annotations

from django.db import connection

# The first key of the per-project advisory lock imports take (the second is the project's id).
IMPORT_LOCK = 7101


def lock_project_for_import(project_id: int) -> None:
    """Let one import at a time write into a project, until its transaction ends.

    An import reads which records the project has once, at its start, and writes only the
    others; a second import running beside it could add the same ones meanwhile.
    SQLite needs no lock: it lets one transaction write at a time anyway.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [IMPORT_LOCK, project_id])
