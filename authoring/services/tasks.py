"""Writing benchmark tasks: create, edit, submit, withdraw, reopen, and their reference files.

Every move goes through authoring.workflow, which checks who may make it and makes it with one
conditional UPDATE; these functions add what the move means (the revision a submission freezes,
the files an edit attaches).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from authoring.models import ReferenceFile, RiskCategory, Task, TaskRevision
from authoring.reference_files import check_reference_file, safe_file_name
from authoring.workflow import Action, move_check, project_roles, transition_apply
from curation.errors import DomainError, NotAllowed
from curation.models import Project, Role
from curation.services.audit import audit_log

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# What an author writes; reference files are attached one by one.
CONTENT_FIELDS: tuple[str, ...] = (
    "sector",
    "occupation",
    "prompt",
    "messages",
    "risk_category",
    "malicious_motivation",
    "risk_outcome",
    "unsafe_criteria",
    "safe_criteria",
)
# Drafts may leave these empty; a task submitted for review may not.
REQUIRED_FOR_REVIEW: tuple[str, ...] = (
    "risk_category",
    "malicious_motivation",
    "risk_outcome",
    "unsafe_criteria",
    "safe_criteria",
)
FIELD_LABELS: dict[str, str] = {
    "sector": "Sector",
    "occupation": "Occupation",
    "prompt": "Prompt",
    "messages": "Messages",
    "risk_category": "Risk category",
    "malicious_motivation": "Malicious motivation",
    "risk_outcome": "Risk outcome",
    "unsafe_criteria": "Unsafe if",
    "safe_criteria": "Safe if",
    "reference_files": "Reference files",
}
# SafePro files key tasks by "<Sector> - <Occupation>": a sector holding it could not be read back.
KEY_SEPARATOR = " - "
SENDER_MAX_CHARS = 100


def task_content_problems(project: Project, content: dict[str, Any]) -> dict[str, str]:
    """What is wrong with a task's content, by field; empty when nothing is.

    Shared by the forms, the API and the import, so that all of them accept the same tasks.
    """
    problems: dict[str, str] = {}
    candidate = Task(
        project=project, external_id="-", **{key: content.get(key) for key in CONTENT_FIELDS}
    )
    if candidate.messages is None:
        candidate.messages = []
    try:
        candidate.clean_fields(exclude=["project", "author", "external_id", "risk_category"])
    except ValidationError as error:
        problems.update(
            {field: " ".join(messages) for field, messages in error.message_dict.items()}
        )
    if KEY_SEPARATOR in (content.get("sector") or ""):
        problems["sector"] = (
            f"must not contain “{KEY_SEPARATOR}”, which separates sector and occupation in "
            "SafePro files."
        )
    message_problem = _messages_problem(content.get("messages"))
    if message_problem:
        problems["messages"] = message_problem
    category = content.get("risk_category")
    if category is not None and (
        not isinstance(category, RiskCategory) or category.project_id != project.pk
    ):
        problems["risk_category"] = "is not a risk category of this project."
    for field in CONTENT_FIELDS:
        if field not in problems and "\x00" in str(content.get(field) or ""):
            problems[field] = "contains a NUL character, which cannot be stored."
    return problems


def task_missing_for_review(task: Task) -> list[str]:
    """The labels of the fields a task must fill in before it can be submitted."""
    return [FIELD_LABELS[field] for field in REQUIRED_FOR_REVIEW if not getattr(task, field)]


def task_snapshot(task: Task) -> dict[str, Any]:
    """The task's content as a revision freezes it: every field of TASK_FIELDS, as plain JSON."""
    return {
        "sector": task.sector,
        "occupation": task.occupation,
        "prompt": task.prompt,
        "messages": task.messages,
        "risk_category": task.risk_category.name if task.risk_category else "",
        "malicious_motivation": task.malicious_motivation,
        "risk_outcome": task.risk_outcome,
        "unsafe_criteria": task.unsafe_criteria,
        "safe_criteria": task.safe_criteria,
        "reference_files": [
            {"name": file.name, "sha256": file.sha256, "size": file.size}
            for file in task.reference_files.order_by("name")
        ],
    }


def task_create(*, actor: User, project: Project, content: dict[str, Any]) -> Task:
    """A new draft written by `actor`, who must be an author or a manager of the project."""
    if not project_roles(actor, project.pk) & {Role.AUTHOR, Role.MANAGER}:
        raise NotAllowed("Only authors and managers write tasks.")
    _check_content(project, content)
    with transaction.atomic():
        # A random id rather than one made from the primary key: it cannot collide with the
        # task_id of a task imported later, which SafePro files choose freely.
        task = Task(project=project, author=actor, external_id=str(uuid.uuid4()), **content)
        task.full_clean()
        task.save()
        audit_log(
            actor=actor,
            action="curation.task.created",
            project=project,
            obj=task,
            after={"state": task.state, "external_id": task.external_id},
        )
    return task


def task_update(*, actor: User, task: Task, expected_version: int, content: dict[str, Any]) -> Task:
    """Change what a draft, or a task sent back for changes, says."""
    _check_content(task.project, content)
    changed = sorted(
        field
        for field in CONTENT_FIELDS
        if field in content and getattr(task, field) != content[field]
    )
    with transaction.atomic():
        transition_apply(
            task=task,
            action=Action.EDIT,
            actor=actor,
            expected_version=expected_version,
            changes={field: content[field] for field in CONTENT_FIELDS if field in content},
            details={"fields": changed},
        )
    return task


def task_submit(*, actor: User, task: Task, expected_version: int) -> TaskRevision:
    """Send the task to review, freezing what it says now as its next revision."""
    now = timezone.now()
    with transaction.atomic():
        # Who may submit and whether the task may be submitted come before what it lacks.
        roles = project_roles(actor, task.project_id)
        move_check(task, Action.SUBMIT, actor, roles, expected_version=expected_version, now=now)
        missing = task_missing_for_review(task)
        if missing:
            raise DomainError(f"Fill in before submitting: {', '.join(missing).lower()}.")
        transition_apply(
            task=task,
            action=Action.SUBMIT,
            actor=actor,
            expected_version=expected_version,
            changes={
                "round": F("round") + 1,
                "submitted_at": now,
                "decided_at": None,
                "reviewer": None,
                "review_expires_at": None,
            },
            details={"revision": task.round + 1},
            now=now,
        )
        return TaskRevision.objects.create(
            task=task, number=task.round, content=task_snapshot(task), created_by=actor
        )


def task_withdraw(*, actor: User, task: Task, expected_version: int) -> Task:
    """Take the task out of the workflow; its author may reopen it as a draft."""
    with transaction.atomic():
        transition_apply(
            task=task,
            action=Action.WITHDRAW,
            actor=actor,
            expected_version=expected_version,
            changes={"reviewer": None, "review_expires_at": None},
        )
    return task


def task_reopen(*, actor: User, task: Task, expected_version: int) -> Task:
    with transaction.atomic():
        transition_apply(
            task=task, action=Action.REOPEN, actor=actor, expected_version=expected_version
        )
    return task


def task_file_attach(
    *, actor: User, task: Task, expected_version: int, name: str, data: bytes
) -> ReferenceFile:
    """Attach a reference file to a task its author may edit now."""
    name = safe_file_name(name)
    content_type = check_reference_file(name, data)
    with transaction.atomic():
        if task.reference_files.filter(name=name).exists():
            raise DomainError(f"A file called “{name}” is already attached; remove it first.")
        transition_apply(
            task=task,
            action=Action.EDIT,
            actor=actor,
            expected_version=expected_version,
            details={"file_attached": name},
        )
        return reference_file_store(
            task=task, name=name, data=data, content_type=content_type, by=actor
        )


def task_file_remove(
    *, actor: User, task: Task, expected_version: int, file: ReferenceFile
) -> None:
    with transaction.atomic():
        transition_apply(
            task=task,
            action=Action.EDIT,
            actor=actor,
            expected_version=expected_version,
            details={"file_removed": file.name},
        )
        stored = file.file.name
        file.delete()
        # The stored bytes go once the row's removal is certain (a file field may have none,
        # though a reference file always has them), unless the tasks of one import share them.
        if stored and not ReferenceFile.objects.filter(file=stored).exists():
            transaction.on_commit(lambda: file.file.storage.delete(stored))


def reference_file_store(
    *, task: Task, name: str, data: bytes, content_type: str, by: User | None
) -> ReferenceFile:
    """Store a checked file for the task (no checks, no audit: the callers do both)."""
    reference = ReferenceFile(
        task=task,
        name=name,
        content_type=content_type,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        uploaded_by=by,
    )
    reference.file.save(name, ContentFile(data), save=False)
    reference.full_clean()
    reference.save()
    return reference


def _check_content(project: Project, content: dict[str, Any]) -> None:
    problems = task_content_problems(project, content)
    if problems:
        raise DomainError(
            "; ".join(
                f"{FIELD_LABELS.get(field, field)}: {message}"
                for field, message in problems.items()
            )
        )


def _messages_problem(messages: object) -> str:
    if messages is None:
        return ""
    if not isinstance(messages, list):
        return "must be a list of messages."
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or set(message) != {"sender", "content"}:
            return f"message {index + 1} must have a sender and a content, and nothing else."
        sender, text = message["sender"], message["content"]
        if not isinstance(sender, str) or not sender.strip():
            return f"message {index + 1} needs a sender."
        if len(sender) > SENDER_MAX_CHARS:
            return (
                f"the sender of message {index + 1} is longer than {SENDER_MAX_CHARS} characters."
            )
        if not isinstance(text, str):
            return f"the content of message {index + 1} must be text."
    return ""
