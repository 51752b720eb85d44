"""Judge runs: create one over a selection of records, cancel, resume, recover, read progress.

A run is cut into chunks that every worker takes a share of (judging/services/run_engine/ does
the work): as many run_judge jobs as it has chunks are sent, up to JUDGE_RUN_MAX_WORKERS. Its
state moves pending -> running -> succeeded ("Finished", or "Finished with errors" when some
records got an error verdict), or cancelling -> cancelled, or failed (the endpoint failed for
records in a row, or for every record), or budget_reached (its cost reached the budget set);
"resume" sends a cancelled, failed, stopped or stalled run back to pending, and the workers
judge the records that have no verdict yet in it (a run stopped at its budget goes on without
one). "Retry the errored
records" sends a run that ended back to pending to judge again the records whose verdict is an
error, each new verdict replacing the error.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotation.models import Annotation
from curation.errors import Conflict, DomainError
from curation.jobs import job_send, job_send_after_commit
from curation.models import Category, Project
from curation.services.audit import audit_log
from judging.models import Judge, JudgeRun, JudgeVersion
from judging.protocols import protocol_for
from judging.services.judges import judge_snapshot
from judging.services.run_cost import run_estimate
from judging.services.run_engine.chunks import chunks_cut

if TYPE_CHECKING:
    from collections.abc import Iterable
    from decimal import Decimal

    from django.contrib.auth.models import User

State = JudgeRun.State
# States in which a worker holds (or should hold) the run.
ACTIVE = (State.RUNNING, State.CANCELLING)


def judge_run_plan(
    *,
    project: Project,
    judge: Judge,
    name: str = "",
    categories: Iterable[Category] = (),
    only_labelled: bool = False,
    sample: int | None = None,
    seed: int | None = None,
    version: JudgeVersion | None = None,
    chosen: Iterable[int] | None = None,
    budget: Decimal | None = None,
) -> JudgeRun:
    """The run a request would make, not saved: its selection, the judge frozen, the
    connection's prices and the cost expected, for a manager to see before it starts.

    The selection: the project's records (those `chosen` by id, if given: the record list's
    selection, or the settled records a version's evaluation holds out), of `categories` if
    any, only those with a human label if `only_labelled`, then a random `sample` of that many
    (drawn with `seed`, kept so the draw can be told and repeated). A SafePro judge takes only
    records linked to a task. `version` judges with that version of the judge rather than its
    active one. The run stops once its cost reaches `budget`, if given.
    """
    if judge.project_id != project.pk:
        raise DomainError("The judge belongs to another project.")
    if sample is not None and sample < 1:
        raise DomainError("A sample holds at least one record.")
    if budget is not None and budget <= 0:
        raise DomainError("A budget is more than nothing.")
    snapshot = judge_snapshot(judge, version)
    category_names = sorted(category.name for category in categories)
    records = project.records.all()
    if chosen is not None:
        records = records.filter(pk__in=list(chosen))
    if category_names:
        records = records.filter(category__name__in=category_names)
    if only_labelled:
        records = records.filter(Exists(Annotation.objects.filter(record=OuterRef("pk"))))
    if protocol_for(snapshot).needs_task:
        records = records.filter(task_link__task__isnull=False)
    selection: dict[str, Any] = {
        "categories": category_names,
        "only_labelled": only_labelled,
        "sample": sample,
    }
    record_ids = list(records.order_by("id").values_list("id", flat=True))
    if chosen is not None:
        selection["chosen"] = len(record_ids)
    seed = seed if seed is not None else secrets.randbelow(2**31)
    if sample is not None and sample < len(record_ids):
        # A draw to repeat from its seed, not a secret.
        record_ids = sorted(random.Random(seed).sample(record_ids, sample))  # noqa: S311
    if not record_ids:
        raise DomainError("The selection holds no records.")
    run = JudgeRun(
        project=project,
        judge=judge,
        source=JudgeRun.Source.JUDGE,
        name=name.strip() or f"{judge.name} · {timezone.localtime():%Y-%m-%d %H:%M}",
        judge_snapshot=snapshot,
        selection={**selection, "seed": seed},
        record_ids=record_ids,
        total=len(record_ids),
        price_in_per_million=judge.connection.price_in_per_million,
        price_out_per_million=judge.connection.price_out_per_million,
        budget=budget,
    )
    run.estimate = run_estimate(run=run)
    return run


def judge_run_create(
    *, actor: User | None, project: Project, judge: Judge, **request: Any
) -> JudgeRun:
    """Make the run `judge_run_plan` describes, and hand it to the workers once committed."""
    run = judge_run_plan(project=project, judge=judge, **request)
    run.created_by = actor if actor is not None and actor.is_authenticated else None
    with transaction.atomic():
        run.full_clean()
        run.save()
        audit_log(
            actor=actor,
            action="judging.run.requested",
            project=project,
            obj=run,
            after={
                "judge": judge.name,
                "records": run.total,
                "selection": run.selection,
                "budget": None if run.budget is None else str(run.budget),
            },
        )
        _dispatch_after_commit(run)
    return run


def judge_run_cancel(*, actor: User | None, run: JudgeRun) -> JudgeRun:
    """Stop a run. A worker running it stops at its next chunk (within seconds); a run that no
    worker holds is cancelled at once."""
    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().get(pk=run.pk)
        if run.state not in (State.PENDING, *ACTIVE):
            raise Conflict(f"The run is {run.get_state_display().lower()}: nothing to cancel.")
        before = run.state
        if run.state == State.RUNNING and not is_stalled(run):
            run.state = State.CANCELLING
        else:
            run.state = State.CANCELLED
            run.finished_at = timezone.now()
        run.save(update_fields=["state", "finished_at", "updated_at"])
        audit_log(
            actor=actor,
            action="judging.run.cancelled",
            project=run.project,
            obj=run,
            before={"state": before},
            after={"state": run.state},
        )
    return run


def judge_run_resume(*, actor: User | None, run: JudgeRun) -> JudgeRun:
    """Hand a cancelled, failed, stalled or never-started run to a worker again: it judges the
    records that have no verdict in the run yet."""
    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().get(pk=run.pk)
        if not is_resumable(run):
            raise Conflict(f"The run is {run.get_state_display().lower()}: it cannot be resumed.")
        before = {"state": run.state, "done": run.done_count}
        if run.state == State.BUDGET_REACHED:
            before["budget"] = str(run.budget)
            run.budget = None
        run.state = State.PENDING
        run.finished_at = None
        run.error = ""
        run.save(update_fields=["state", "finished_at", "error", "budget", "updated_at"])
        audit_log(
            actor=actor,
            action="judging.run.resumed",
            project=run.project,
            obj=run,
            before=before,
            after={"state": run.state},
        )
        _dispatch_after_commit(run)
    return run


def judge_run_retry_errors(*, actor: User | None, run: JudgeRun) -> JudgeRun:
    """Hand a run that ended to a worker again to judge its errored records once more."""
    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().get(pk=run.pk)
        if not can_retry_errors(run):
            raise Conflict("Only a judge run that has ended with error verdicts can retry them.")
        before = run.state
        run.state = State.PENDING
        run.retry_errors = True
        run.finished_at = None
        run.error = ""
        run.save(update_fields=["state", "retry_errors", "finished_at", "error", "updated_at"])
        audit_log(
            actor=actor,
            action="judging.run.errors_retried",
            project=run.project,
            obj=run,
            before={"state": before, "errors": run.error_count},
            after={"state": run.state},
        )
        _dispatch_after_commit(run)
    return run


def judge_runs_recover() -> list[int]:
    """Take up the runs whose worker died: called when a worker starts.

    A stalled run or panel (running, heartbeat older than JUDGE_RUN_STALE_SECONDS) is
    dispatched now; a running one whose heartbeat is still fresh is checked again once it would
    be stale, since its worker may be the one that just restarted. A stalled cancellation is
    finished here.
    """
    now = timezone.now()
    stale_after = timedelta(seconds=settings.JUDGE_RUN_STALE_SECONDS)
    with transaction.atomic():
        JudgeRun.objects.filter(
            Q(heartbeat_at__lt=now - stale_after) | Q(heartbeat_at__isnull=True),
            state=State.CANCELLING,
        ).update(state=State.CANCELLED, finished_at=now, updated_at=now)
    recovered = []
    running = JudgeRun.objects.filter(state=State.RUNNING)
    for run_id, source, heartbeat_at in running.values_list("id", "source", "heartbeat_at"):
        wait = 0.0 if heartbeat_at is None else (heartbeat_at + stale_after - now).total_seconds()
        countdown = max(0.0, wait + 1)
        if source == JudgeRun.Source.PANEL:
            job_send("judging.tasks.compute_panel", run_id, countdown=countdown)
        else:
            job_send("judging.tasks.run_judge", run_id, countdown=countdown)
        recovered.append(run_id)
    return recovered


def is_stalled(run: JudgeRun) -> bool:
    """A run a worker should hold but whose heartbeat has stopped: its worker died."""
    if run.state not in ACTIVE:
        return False
    if run.heartbeat_at is None:
        return True
    age = timezone.now() - run.heartbeat_at
    return age > timedelta(seconds=settings.JUDGE_RUN_STALE_SECONDS)


def is_resumable(run: JudgeRun) -> bool:
    if run.source != JudgeRun.Source.JUDGE:
        return False
    resumable = (State.PENDING, State.CANCELLED, State.FAILED, State.BUDGET_REACHED)
    return run.state in resumable or is_stalled(run)


def can_retry_errors(run: JudgeRun) -> bool:
    return run.source == JudgeRun.Source.JUDGE and is_finished(run) and run.error_count > 0


def is_finished(run: JudgeRun) -> bool:
    return run.state in (State.SUCCEEDED, State.CANCELLED, State.FAILED, State.BUDGET_REACHED)


@dataclass(frozen=True)
class RunProgress:
    done: int
    total: int
    # Records judged per second lately, and the seconds left at that rate (None: unknown).
    rate: float | None
    seconds_left: float | None

    @property
    def percent(self) -> int:
        return 100 if not self.total else min(100, self.done * 100 // self.total)

    @property
    def time_left(self) -> str:
        if self.seconds_left is None:
            return ""
        minutes, seconds = divmod(round(self.seconds_left), 60)
        hours, minutes = divmod(minutes, 60)
        if hours:
            return f"{hours} h {minutes} min"
        return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def run_progress(run: JudgeRun) -> RunProgress:
    """How far a run is, from its row: the worker commits verdicts and counts as it goes."""
    done = run.done_count
    seconds_left = None
    if run.state == State.RUNNING and run.rate:
        seconds_left = max(run.total - done, 0) / run.rate
    return RunProgress(done=done, total=run.total, rate=run.rate, seconds_left=seconds_left)


def selection_description(selection: dict[str, Any]) -> str:
    """The selection in words, for pages."""
    parts = [
        f"categories {', '.join(selection['categories'])}"
        if selection.get("categories")
        else "all categories"
    ]
    if selection.get("chosen"):
        parts.insert(0, f"{selection['chosen']} chosen records")
    if selection.get("only_labelled"):
        parts.append("only records with a human label")
    if selection.get("sample"):
        parts.append(f"a random sample of {selection['sample']} (seed {selection.get('seed')})")
    return "; ".join(parts)


def _dispatch_after_commit(run: JudgeRun) -> None:
    """Cut the run into chunks and send a job for each, up to the most workers a run spreads
    over: every free worker takes one and works chunk after chunk; the jobs that find none left
    end at once. One job at least, to close a run with nothing left to judge."""
    chunks = chunks_cut(run=run)
    for _ in range(max(1, min(chunks, settings.JUDGE_RUN_MAX_WORKERS))):
        job_send_after_commit("judging.tasks.run_judge", run.pk)
