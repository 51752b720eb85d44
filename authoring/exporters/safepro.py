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

from authoring.importers.safepro import group_key
from authoring.models import ReferenceFile, Task
from curation.importers.layout import path_part
from curation.models import Project

SAFEPRO_JSON_NAME = "safepro.json"


def approved_tasks(project: Project) -> QuerySet[Task]:
    files = Prefetch("reference_files", queryset=ReferenceFile.objects.order_by("name"))
    return (
        project.tasks.filter(state=Task.State.APPROVED)
        .select_related("risk_category")
        .prefetch_related(files)
        .order_by("id")
    )


def reference_file_path(task_id: str, name: str) -> str:
    """Where the zip export holds a reference file, as the task's reference_files lists it."""
    return f"reference_files/{path_part(task_id)}/{path_part(name)}"


def exported_file_path(task: Task, file: ReferenceFile) -> str:
    return reference_file_path(task.external_id, file.name)


def safepro_entry(task_id: str, content: dict[str, Any]) -> dict[str, Any]:
    """One task as a SafePro file holds it, from its content as a revision freezes it
    (authoring.services.tasks.task_snapshot)."""
    return {
        "task_id": task_id,
        "prompt": content["prompt"],
        "messages": [
            {"sender": message["sender"], "content": message["content"]}
            for message in content["messages"]
        ],
        "reference_files": [
            reference_file_path(task_id, file["name"]) for file in content["reference_files"]
        ],
        "risk_category": content["risk_category"],
        "malicious_motivation": content["malicious_motivation"],
        "risk_outcome": content["risk_outcome"],
        "unsafe_criteria": content["unsafe_criteria"],
        "safe_criteria": content["safe_criteria"],
    }


def safepro_document(project: Project) -> dict[str, list[dict[str, Any]]]:
    document: dict[str, list[dict[str, Any]]] = {}
    for task in approved_tasks(project):
        content = {
            field: getattr(task, field)
            for field in (
                "prompt",
                "messages",
                "malicious_motivation",
                "risk_outcome",
                "unsafe_criteria",
                "safe_criteria",
            )
        }
        content["risk_category"] = task.risk_category.name if task.risk_category else ""
        content["reference_files"] = [{"name": f.name} for f in task.reference_files.all()]
        document.setdefault(group_key(task.sector, task.occupation), []).append(
            safepro_entry(task.external_id, content)
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
