"""Approved tasks in the SafePro layout: a JSON object keyed "<Sector> - <Occupation>".

Each task is written with SafePro's keys in SafePro's order; its reference files are listed as
"reference_files/<task_id>/<name>", the paths at which the zip export holds them, so that the zip
imported again gives back the same tasks with the same files. Groups and tasks come in the order
the tasks were created, which for an imported file is the file's own order.
"""

from __future__ import annotations

import json
import zipfile
from typing import Any, BinaryIO

from django.db.models import Prefetch, QuerySet

from curation.importers.layout import path_part
from curation.importers.safepro import group_key
from curation.models import Project, ReferenceFile, Task

SAFEPRO_JSON_NAME = "safepro.json"


def approved_tasks(project: Project) -> QuerySet[Task]:
    files = Prefetch("reference_files", queryset=ReferenceFile.objects.order_by("name"))
    return (
        project.tasks.filter(state=Task.State.APPROVED)
        .select_related("risk_category")
        .prefetch_related(files)
        .order_by("id")
    )


def exported_file_path(task: Task, file: ReferenceFile) -> str:
    """Where the zip export holds a reference file, as the task's reference_files lists it."""
    return f"reference_files/{path_part(task.external_id)}/{path_part(file.name)}"


def safepro_document(project: Project) -> dict[str, list[dict[str, Any]]]:
    document: dict[str, list[dict[str, Any]]] = {}
    for task in approved_tasks(project):
        document.setdefault(group_key(task.sector, task.occupation), []).append(
            {
                "task_id": task.external_id,
                "prompt": task.prompt,
                "messages": [
                    {"sender": message["sender"], "content": message["content"]}
                    for message in task.messages
                ],
                "reference_files": [
                    exported_file_path(task, f) for f in task.reference_files.all()
                ],
                "risk_category": task.risk_category.name if task.risk_category else "",
                "malicious_motivation": task.malicious_motivation,
                "risk_outcome": task.risk_outcome,
                "unsafe_criteria": task.unsafe_criteria,
                "safe_criteria": task.safe_criteria,
            }
        )
    return document


def safepro_json(project: Project) -> bytes:
    """The project's approved tasks as a SafePro file."""
    return json.dumps(safepro_document(project), indent=2, ensure_ascii=False).encode()


def safepro_zip(project: Project, stream: BinaryIO) -> int:
    """The SafePro file and every reference file it lists, zipped on `stream`; the task count."""
    count = 0
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(SAFEPRO_JSON_NAME, safepro_json(project))
        for task in approved_tasks(project):
            count += 1
            for file in task.reference_files.all():
                with file.file.open("rb") as content:
                    archive.writestr(exported_file_path(task, file), content.read())
    return count
