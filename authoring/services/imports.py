"""Importing SafePro files: tasks with their reference files, and agent runs as records.

Both check the whole input before writing anything, write in one transaction, and skip what the
project already has, so importing a file twice adds nothing the second time. A task file comes
from the studio's pages through a worker (services/import_jobs.py), or from a command; its
reference files are read one at a time, when checked and again when stored, so that an import
holds one file in memory however many it brings. A file that several tasks name is checked and
stored once, its tasks sharing it, and what an import stores, not what its zip holds, is counted
against IMPORT_MAX_UNPACKED_BYTES: a small zip of many tasks naming one large file would
otherwise write that file once per task.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from authoring.importers.safepro import SafeProTask, TaskProblem, read_safepro
from authoring.importers.safepro_source import SafeProSource
from authoring.models import RecordTask, ReferenceFile, RiskCategory, Task, TaskRevision
from authoring.reference_files import check_reference_file, safe_file_name
from authoring.services.tasks import (
    REQUIRED_FOR_REVIEW,
    reference_file_store,
    task_content_problems,
    task_snapshot,
)
from authoring.workflow import project_roles
from curation.choices import SourceFormat
from curation.errors import DomainError, NotAllowed
from curation.formats.safepro_run import AgentRun, read_run
from curation.importers import PROBLEM_LIMIT, InvalidRecord, Problem, layout_path
from curation.models import Category, ImportBatch, ImportFormat, Project, Record, Role, Scenario
from curation.services.audit import audit_log
from curation.services.import_lock import lock_project_for_import
from curation.services.search import search_index_update, search_index_update_later

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The states imported tasks may start in: drafts to take through review, or an already
# reviewed benchmark (a published SafePro file).
IMPORT_STATES = (Task.State.DRAFT, Task.State.APPROVED)
# Where agent runs sit in the R-Judge layout, by the name of their file: a records export writes
# each run file back as one JSON list.
RUNS_FOLDER = "SafePro runs"
CATEGORY_MAX_CHARS = Category._meta.get_field("name").max_length


@dataclass
class TaskImportReport:
    created: list[str] = field(default_factory=list)
    # The task_ids the project had already: left as they are.
    existing: list[str] = field(default_factory=list)
    # Nothing was written when there are problems.
    problems: list[TaskProblem] = field(default_factory=list)


@dataclass
class _Prepared:
    task: SafeProTask
    content: dict[str, Any]
    # (name, path in the source, content type), each checked.
    files: list[tuple[str, str, str]]


def safepro_import(
    *,
    actor: User,
    project: Project,
    source: SafeProSource,
    state: str = Task.State.DRAFT,
) -> TaskImportReport:
    """Import a SafePro file's tasks as drafts by `actor`, or as approved tasks.

    Tasks whose task_id the project has are reported as already present and left alone.
    """
    if Role.MANAGER not in project_roles(actor, project.pk):
        raise NotAllowed("Only managers import tasks.")
    if state not in IMPORT_STATES:
        raise DomainError("Imported tasks start as drafts or as approved tasks.")
    tasks, problems = read_safepro(source.document())
    report = TaskImportReport(problems=problems)
    stored: list[str] = []
    try:
        with transaction.atomic():
            # One import at a time per project, so that two cannot both add the same task_id.
            lock_project_for_import(project.pk)
            present = set(
                project.tasks.filter(external_id__in=[t.task_id for t in tasks]).values_list(
                    "external_id", flat=True
                )
            )
            report.existing = [task.task_id for task in tasks if task.task_id in present]
            fresh = [task for task in tasks if task.task_id not in present]
            prepared = _prepare(project, source, fresh, state)
            report.problems.extend(prepared.problems)
            if report.problems:
                report.problems = report.problems[:PROBLEM_LIMIT]
                return report
            now = timezone.now()
            # Each path's first stored file, which later tasks naming the path share.
            shared: dict[str, ReferenceFile] = {}
            for item in prepared.items:
                stored.extend(_create(actor, project, source, item, state, now, shared))
                report.created.append(item.task.task_id)
    except BaseException:
        # The rows went with the transaction: the files stored for them go too.
        for name in stored:
            default_storage.delete(name)
        raise
    return report


@dataclass
class _Preparation:
    items: list[_Prepared]
    problems: list[TaskProblem]


def _prepare(
    project: Project, source: SafeProSource, tasks: list[SafeProTask], state: str
) -> _Preparation:
    """The tasks' content checked as the studio checks a task, and their files read."""
    categories: dict[str, RiskCategory] = {}
    for risk_category in project.risk_categories.all():
        for key in (risk_category.name, risk_category.slug):
            categories[key.casefold()] = risk_category
    known = ", ".join(sorted({c.name for c in categories.values()}))
    items, problems = [], []
    # Each path's content type and size once checked, or what is wrong with it.
    checked: dict[str, tuple[str, int] | str] = {}
    stored_bytes = 0
    cap = settings.IMPORT_MAX_UNPACKED_BYTES
    for task in tasks:

        def problem(name: str, message: str, task: SafeProTask = task) -> None:
            problems.append(TaskProblem(task.key, task.index, name, message))

        category = categories.get(task.risk_category.strip().casefold())
        if task.risk_category and category is None:
            problem(
                "risk_category",
                f"“{task.risk_category}” is not a risk category of this project ({known}).",
            )
        content = {
            "sector": task.sector,
            "occupation": task.occupation,
            "prompt": task.prompt,
            "messages": task.messages,
            "risk_category": category,
            "malicious_motivation": task.malicious_motivation,
            "risk_outcome": task.risk_outcome,
            "unsafe_criteria": task.unsafe_criteria,
            "safe_criteria": task.safe_criteria,
        }
        for name, message in task_content_problems(project, content).items():
            if name in ("sector", "occupation"):
                # They come from the key, which the problem names already.
                problem("", f"the {name} {message}")
            else:
                problem(name, message)
        if state == Task.State.APPROVED:
            for name in REQUIRED_FOR_REVIEW:
                if not content[name] and not (name == "risk_category" and task.risk_category):
                    problem(name, "is required for an approved task.")
        files: list[tuple[str, str, str]] = []
        for position, path in enumerate(task.reference_files):
            where = f"reference_files[{position}]"
            name = safe_file_name(PurePosixPath(path).name)
            if any(name == other for other, _, _ in files):
                problem(where, f"a second file called “{name}”.")
                continue
            first_time = path not in checked
            if first_time:
                checked[path] = _check_reference(source, path, name)
            outcome = checked[path]
            if isinstance(outcome, str):
                problem(where, outcome)
                continue
            content_type, size = outcome
            if first_time:
                stored_bytes += size
                if stored_bytes > cap:
                    problem(
                        where,
                        f"“{path}” brings the files this import stores to more than the limit "
                        f"of {cap:,} bytes.",
                    )
                    continue
            files.append((name, path, content_type))
        items.append(_Prepared(task, content, files))
    return _Preparation(items, problems)


def _check_reference(source: SafeProSource, path: str, name: str) -> tuple[str, int] | str:
    """(content type, size) of the reference file at `path`, or what is wrong with it."""
    data = source.reference(path)
    if data is None:
        return f"“{path}” is not in {source.name}."
    try:
        return check_reference_file(name, data), len(data)
    except DomainError as error:
        return error.message


def _create(
    actor: User,
    project: Project,
    source: SafeProSource,
    item: _Prepared,
    state: str,
    now: Any,
    shared: dict[str, ReferenceFile],
) -> list[str]:
    """Create the task and its files; return the names of the files stored."""
    approved = state == Task.State.APPROVED
    task = Task(
        project=project,
        author=actor,
        external_id=item.task.task_id,
        state=state,
        round=1 if approved else 0,
        submitted_at=now if approved else None,
        decided_at=now if approved else None,
        **item.content,
    )
    task.full_clean()
    task.save()
    stored = []
    for name, path, content_type in item.files:
        first = shared.get(path)
        if first is not None:
            _reference_share(task=task, name=name, first=first, by=actor)
            continue
        shared[path] = reference_file_store(
            task=task,
            name=name,
            data=_read_again(source, path),
            content_type=content_type,
            by=actor,
        )
        stored.append(shared[path])
    if approved:
        # An approved task is one whose submission was accepted: it has that revision.
        TaskRevision.objects.create(
            task=task, number=1, content=task_snapshot(task), created_by=actor
        )
    audit_log(
        actor=actor,
        action="curation.task.imported",
        project=project,
        obj=task,
        after={"state": state, "external_id": task.external_id, "files": len(item.files)},
    )
    # Each was saved with its bytes, so each has a name in storage.
    return [reference.file.name for reference in stored if reference.file.name]


def _reference_share(*, task: Task, name: str, first: ReferenceFile, by: User) -> None:
    """Attach to `task` the bytes another task of the import stored for the same path."""
    reference = ReferenceFile(
        task=task,
        name=name,
        content_type=first.content_type,
        size=first.size,
        sha256=first.sha256,
        uploaded_by=by,
    )
    reference.file.name = first.file.name
    reference.full_clean()
    reference.save()


def _read_again(source: SafeProSource, path: str) -> bytes:
    data = source.reference(path)
    if data is None:
        raise DomainError(f"“{path}” went from {source.name} during the import.")
    return data


@dataclass
class RunImportReport:
    created: int = 0
    existing: int = 0
    # By line of the file; nothing was written when there are problems.
    problems: list[Problem] = field(default_factory=list)
    batch: ImportBatch | None = None


def agent_runs_import(
    *,
    actor: User | None,
    project: Project,
    name: str,
    lines: Iterable[bytes | str],
    index_now: bool = False,
) -> RunImportReport:
    """Import agent runs (JSONL) as records linked to the tasks they ran.

    Each record's category and scenario are its task's sector and occupation. The text search
    indexes the new records once the import commits (at once with `index_now`, for commands).
    """
    if actor is not None and Role.MANAGER not in project_roles(actor, project.pk):
        raise NotAllowed("Only managers import agent runs.")
    report = RunImportReport()
    runs: list[tuple[int, AgentRun]] = []
    for number, line in enumerate(lines, start=1):
        try:
            text = line.decode() if isinstance(line, bytes) else line
            if not text.strip():
                continue
            runs.append((number, read_run(text)))
        except UnicodeDecodeError:
            report.problems.append(Problem(name, number, "", "is not UTF-8 text", unit="line"))
        except InvalidRecord as invalid:
            report.problems.extend(
                Problem(name, number, field, message, unit="line")
                for field, message in invalid.problems
            )
        if len(report.problems) >= PROBLEM_LIMIT:
            break
    tasks = {
        task.external_id: task
        for task in project.tasks.filter(external_id__in={run.instance_id for _, run in runs})
    }
    for number, run in runs:
        task = tasks.get(run.instance_id)
        if task is None:
            report.problems.append(
                Problem(
                    name,
                    number,
                    "instance_id",
                    f"no task of this project has the task_id “{run.instance_id}”",
                    unit="line",
                )
            )
        elif CATEGORY_MAX_CHARS is not None and len(task.sector) > CATEGORY_MAX_CHARS:
            report.problems.append(
                Problem(
                    name,
                    number,
                    "instance_id",
                    f"the task's sector is longer than {CATEGORY_MAX_CHARS} characters, the "
                    "longest a category may be",
                    unit="line",
                )
            )
    if report.problems:
        report.problems = report.problems[:PROBLEM_LIMIT]
        return report
    with transaction.atomic():
        lock_project_for_import(project.pk)
        report.batch = _write_runs(actor, project, name, runs, tasks, report)
    if report.created:
        if index_now:
            search_index_update(project_id=project.pk)
        else:
            search_index_update_later(project_id=project.pk)
    return report


def _write_runs(
    actor: User | None,
    project: Project,
    name: str,
    runs: list[tuple[int, AgentRun]],
    tasks: dict[str, Task],
    report: RunImportReport,
) -> ImportBatch:
    now = timezone.now()
    present = set(
        project.records.filter(external_id__in=[run.external_id for _, run in runs]).values_list(
            "external_id", flat=True
        )
    )
    batch = ImportBatch(
        project=project,
        created_by=actor,
        source_name=name[-300:],
        format=ImportFormat.JSONL,
        state=ImportBatch.State.SUCCEEDED,
        attempts=1,
        started_at=now,
        finished_at=now,
        record_count=len(runs),
    )
    batch.full_clean()
    batch.save()
    source_path = layout_path(RUNS_FOLDER, f"{PurePosixPath(name).stem}.json")
    records: list[Record] = []
    sectors: Counter[str] = Counter()
    tasks_of_records: list[Task] = []
    for position, (_, run) in enumerate(runs):
        if run.external_id in present:
            report.existing += 1
            continue
        present.add(run.external_id)
        task = tasks[run.instance_id]
        category, _ = Category.objects.get_or_create(project=project, name=task.sector)
        scenario, _ = Scenario.objects.get_or_create(category=category, name=task.occupation)
        sectors[task.sector] += 1
        records.append(
            Record(
                project=project,
                batch=batch,
                external_id=run.external_id,
                category=category,
                scenario=scenario,
                source_format=SourceFormat.SAFEPRO_RUN,
                source_path=source_path,
                source_position=position,
                profile=run.profile,
                preview=run.preview,
                content_hash=run.content_hash,
                raw=run.raw,
                metadata=run.metadata,
                source_agent=run.model,
            )
        )
        tasks_of_records.append(task)
    Record.objects.bulk_create(records)
    _link_tasks(records, tasks_of_records)
    report.created = len(records)
    batch.created_count = report.created
    batch.existing_count = report.existing
    batch.category_counts = dict(sectors)
    batch.save()
    audit_log(
        actor=actor,
        action="curation.import.succeeded",
        project=project,
        obj=batch,
        after={"records": len(runs), "created": report.created, "existing": report.existing},
    )
    return batch


def _link_tasks(records: list[Record], tasks: list[Task]) -> None:
    """Record, for each new record, the task its agent run was made for: one statement a task."""
    by_task: dict[int, list[int]] = {}
    for record, task in zip(records, tasks, strict=True):
        by_task.setdefault(task.pk, []).append(record.pk)
    for task_id, record_ids in by_task.items():
        RecordTask.objects.filter(pk__in=record_ids).update(task_id=task_id)
