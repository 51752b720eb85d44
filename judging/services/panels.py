"""Panels: several runs over the same records combined into one verdict per record.

A panel is a run (`JudgeRun.Source.PANEL`) whose verdicts are computed here, by a worker,
from its members' verdicts on the records every member judged. Two rules:

- **majority**: the label more of the members' valid answers give; a tie (one safe and one
  unsafe, two and two, ...) is no answer: an invalid verdict, as a human split without a
  majority is no consensus.
- **any unsafe**: unsafe if any member's valid answer is unsafe, else safe if any is safe.

Under both, a member's invalid answer or error is an abstention: the panel decides from the
valid answers. A record on which no member gave one gets an invalid verdict, or an error
verdict when every member's was an error. Invalid and error verdicts of the panel count as
wrong answers in its quality, as any run's do.

A panel is made in two steps, as every long job of the studio: `panel_create` (the page, the
API) checks the members, fixes the records they all judged and saves the panel's run as
pending; a worker then combines the members' verdicts (`panel_compute`, the compute_panel task),
BATCH records a transaction, each with the run's counts and heartbeat, so that the run's page
follows its progress as a judge run's. The worker claims the run with a conditional UPDATE
(pending, or running with a stale heartbeat: its worker died), and each of its commits must
find the heartbeat it wrote last: a job sent twice, or run by two workers at once, combines
each record once, and a worker that lost its claim writes nothing more.

A panel is computed once: a member's verdicts changed afterwards (errors retried) change it
no more than they change a release; making the panel again takes them.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from curation.choices import SafetyLabel
from curation.errors import DomainError
from curation.jobs import job_send_after_commit
from curation.models import Project
from curation.services.audit import audit_log
from judging.models import SCORE_PROTOCOLS, JudgeRun, Panel, PanelMember, Verdict
from judging.selectors import run_protocol
from judging.signals import verdicts_saved

if TYPE_CHECKING:
    from datetime import datetime

    from django.contrib.auth.models import User

Parse = Verdict.Parse
State = JudgeRun.State
Rule = Panel.Rule
ENDED = (JudgeRun.State.SUCCEEDED, JudgeRun.State.CANCELLED, JudgeRun.State.FAILED)
BATCH = 5_000


def panel_verdict(answers: list[tuple[str, str]], rule: str) -> tuple[str, str]:
    """The panel's (parse status, label) from its members' (parse status, label) on a record."""
    safe = sum(1 for status, label in answers if status == Parse.VALID and label == "safe")
    unsafe = sum(1 for status, label in answers if status == Parse.VALID and label == "unsafe")
    if not safe + unsafe:
        errors = all(status == Parse.ERROR for status, _ in answers)
        return (Parse.ERROR if errors else Parse.INVALID), ""
    if rule == Rule.ANY_UNSAFE:
        return Parse.VALID, SafetyLabel.UNSAFE if unsafe else SafetyLabel.SAFE
    if safe == unsafe:
        return Parse.INVALID, ""
    return Parse.VALID, SafetyLabel.UNSAFE if unsafe > safe else SafetyLabel.SAFE


def panel_create(
    *,
    actor: User | None,
    project: Project,
    members: list[JudgeRun],
    rule: str,
    name: str = "",
) -> JudgeRun:
    """Save a panel of ended runs of safety labels over the records all of them judged, and
    hand it to a worker once committed, which combines their verdicts (`panel_compute`)."""
    # As the rows are now: a member's state may have moved since the caller read it.
    members = list(
        JudgeRun.objects.filter(pk__in=[run.pk for run in members])
        .select_related("judge")
        .defer("record_ids", "report")
        .order_by("pk")
    )
    _check(project, members, rule)
    record_ids = list(
        Verdict.objects.filter(run__in=members)
        .order_by("record_id")
        .values("record_id")
        .annotate(answers=Count("run_id"))
        .filter(answers=len(members))
        .values_list("record_id", flat=True)
    )
    if not record_ids:
        raise DomainError("The runs chosen have judged no record in common.")
    rule_name = Rule(rule).label.lower()
    with transaction.atomic():
        run = JudgeRun.objects.create(
            project=project,
            source=JudgeRun.Source.PANEL,
            name=name.strip() or f"Panel of {', '.join(r.name for r in members)} ({rule_name})",
            judge_snapshot={
                "protocol": "panel",
                "rule": rule,
                "members": [{"id": r.pk, "name": r.name} for r in members],
            },
            record_ids=record_ids,
            total=len(record_ids),
            created_by=actor if actor is not None and actor.is_authenticated else None,
        )
        panel = Panel.objects.create(run=run, rule=rule)
        PanelMember.objects.bulk_create(PanelMember(panel=panel, run=r) for r in members)
        audit_log(
            actor=actor,
            action="judging.panel.created",
            project=project,
            obj=run,
            after={"rule": rule, "members": [r.name for r in members], "records": run.total},
        )
        job_send_after_commit("judging.tasks.compute_panel", run.pk)
    return run


def panel_compute(*, run_id: int) -> bool:
    """Combine the panel's members' verdicts on its records (the worker's job), looking for
    the disagreements its verdicts make as it goes; safe to call twice and from two workers
    at once. False when another worker holds the panel, alive as far as its heartbeat says:
    the caller may look again once that heartbeat would be stale."""
    heartbeat = _claim(run_id)
    if heartbeat is None:
        return not JudgeRun.objects.filter(pk=run_id, state=State.RUNNING).exists()
    run = JudgeRun.objects.select_related("panel", "project", "created_by").get(pk=run_id)
    # The records not combined yet: all of them, unless a worker that died left some done.
    wanted = set(run.record_ids).difference(run.verdicts.values_list("record_id", flat=True))
    rows = (
        Verdict.objects.filter(run__in=run.panel.members.all())
        .order_by("record_id", "run_id")
        .values_list("record_id", "parse_status", "label")
    )
    batch: list[Verdict] = []
    for record_id, said in groupby(rows.iterator(chunk_size=BATCH), key=itemgetter(0)):
        if record_id not in wanted:
            continue
        answers = [(status, label) for _, status, label in said]
        status, label = panel_verdict(answers, run.panel.rule)
        batch.append(
            Verdict(
                run=run,
                record_id=record_id,
                parse_status=status,
                label=label,
                analysis=_tally(answers),
            )
        )
        if len(batch) == BATCH:
            heartbeat = _commit(run, heartbeat, batch, last=False)
            if heartbeat is None:
                return True
            batch = []
    _commit(run, heartbeat, batch, last=True)
    return True


def _claim(run_id: int) -> datetime | None:
    """Take the panel if it waits for a worker, or if the worker holding it stopped beating;
    the heartbeat written, which this worker's commits must find, or None."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.JUDGE_RUN_STALE_SECONDS)
    claimed = (
        JudgeRun.objects.filter(pk=run_id, source=JudgeRun.Source.PANEL)
        .filter(Q(state=State.PENDING) | Q(state=State.RUNNING, heartbeat_at__lt=stale))
        .update(
            state=State.RUNNING,
            heartbeat_at=now,
            started_at=Coalesce("started_at", now),
            updated_at=now,
        )
    )
    return now if claimed == 1 else None


def _commit(
    run: JudgeRun, heartbeat: datetime, verdicts: list[Verdict], *, last: bool
) -> datetime | None:
    """Write a batch of the panel's verdicts with its counts and a new heartbeat, and the end
    of the panel with the `last`; the new heartbeat, or None when this worker no longer holds
    the panel (cancelled, or taken over after its heartbeat went stale)."""
    now = timezone.now()
    counts = Counter(verdict.parse_status for verdict in verdicts)
    done = {"state": State.SUCCEEDED, "finished_at": now} if last else {}
    with transaction.atomic():
        held = JudgeRun.objects.filter(pk=run.pk, state=State.RUNNING, heartbeat_at=heartbeat)
        if not held.update(
            heartbeat_at=now,
            valid_count=F("valid_count") + counts[Parse.VALID],
            invalid_count=F("invalid_count") + counts[Parse.INVALID],
            error_count=F("error_count") + counts[Parse.ERROR],
            updated_at=now,
            **done,
        ):
            JudgeRun.objects.filter(pk=run.pk, state=State.CANCELLING).update(
                state=State.CANCELLED, finished_at=now, updated_at=now
            )
            return None
        Verdict.objects.bulk_create(verdicts)
        verdicts_saved.send(
            sender=JudgeRun,
            project_id=run.project_id,
            record_ids=[verdict.record_id for verdict in verdicts],
        )
        if last:
            run.refresh_from_db(fields=["valid_count", "invalid_count", "error_count"])
            audit_log(
                actor=run.created_by,
                action="judging.panel.computed",
                project=run.project,
                obj=run,
                after={
                    "valid": run.valid_count,
                    "invalid": run.invalid_count,
                    "error": run.error_count,
                },
            )
    return now


def _check(project: Project, members: list[JudgeRun], rule: str) -> None:
    if rule not in Rule.values:
        raise DomainError(f"A panel decides by {' or '.join(Rule.values)}.")
    if len(members) < 2:
        raise DomainError("A panel combines two runs or more.")
    if any(run.project_id != project.pk for run in members):
        raise DomainError("Every run of a panel belongs to its project.")
    if any(run.source == JudgeRun.Source.PANEL for run in members):
        raise DomainError("A panel combines runs, not other panels.")
    if any(run_protocol(run) in SCORE_PROTOCOLS for run in members):
        raise DomainError("A panel combines runs that answer safe or unsafe, not scores.")
    if active := [run.name for run in members if run.state not in ENDED]:
        raise DomainError(f"Wait for these runs to end: {', '.join(active)}.")


def _tally(answers: list[tuple[str, str]]) -> str:
    """What the members said, in words, for the verdict's analysis."""
    said = [
        label if status == Parse.VALID else f"no answer ({status})" for status, label in answers
    ]
    counts = {answer: said.count(answer) for answer in dict.fromkeys(sorted(said))}
    return "Members: " + ", ".join(f"{count} {answer}" for answer, count in counts.items())
