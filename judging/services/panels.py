"""Panels: several runs over the same records combined into one verdict per record.

A panel is a run (`JudgeRun.Source.PANEL`) whose verdicts are computed here, when it is made,
from its members' verdicts on the records every member judged. Two rules:

- **majority**: the label more of the members' valid answers give; a tie (one safe and one
  unsafe, two and two, ...) is no answer: an invalid verdict, as a human split without a
  majority is no consensus.
- **any unsafe**: unsafe if any member's valid answer is unsafe, else safe if any is safe.

Under both, a member's invalid answer or error is an abstention: the panel decides from the
valid answers. A record on which no member gave one gets an invalid verdict, or an error
verdict when every member's was an error. Invalid and error verdicts of the panel count as
wrong answers in its quality, as any run's do.

A panel is computed once: a member's verdicts changed afterwards (errors retried) change it
no more than they change a release; making the panel again takes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from curation.choices import SafetyLabel
from curation.errors import DomainError
from curation.models import Project
from curation.services.audit import audit_log
from judging.models import JudgeRun, Panel, PanelMember, Verdict
from judging.selectors import run_protocol
from judging.services.disagreements import detect_disagreements

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

Parse = Verdict.Parse
Rule = Panel.Rule
SCORE_PROTOCOLS = ("toolemu_safety", "toolemu_helpfulness")
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
    actor: AbstractBaseUser | None,
    project: Project,
    members: list[JudgeRun],
    rule: str,
    name: str = "",
) -> JudgeRun:
    """Combine ended runs of safety labels into a panel run over the records all of them
    judged, and look for the disagreements its verdicts make."""
    # As the rows are now: a member's state may have moved since the caller read it.
    members = list(
        JudgeRun.objects.filter(pk__in=[run.pk for run in members])
        .select_related("judge")
        .defer("record_ids", "report")
        .order_by("pk")
    )
    _check(project, members, rule)
    answers: dict[int, list[tuple[str, str]]] = {}
    rows = Verdict.objects.filter(run__in=members).order_by("record_id", "run_id")
    for record_id, status, label in rows.values_list("record_id", "parse_status", "label"):
        answers.setdefault(record_id, []).append((status, label))
    record_ids = [record for record, said in answers.items() if len(said) == len(members)]
    if not record_ids:
        raise DomainError("The runs chosen have judged no record in common.")
    now = timezone.now()
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
            state=JudgeRun.State.SUCCEEDED,
            started_at=now,
            finished_at=now,
            created_by=actor if actor is not None and actor.is_authenticated else None,
        )
        panel = Panel.objects.create(run=run, rule=rule)
        PanelMember.objects.bulk_create(PanelMember(panel=panel, run=r) for r in members)
        counts = {Parse.VALID: 0, Parse.INVALID: 0, Parse.ERROR: 0}
        verdicts = []
        for record_id in record_ids:
            status, label = panel_verdict(answers[record_id], rule)
            counts[status] += 1
            verdicts.append(
                Verdict(
                    run=run,
                    record_id=record_id,
                    parse_status=status,
                    label=label,
                    analysis=_tally(answers[record_id]),
                )
            )
        Verdict.objects.bulk_create(verdicts, batch_size=BATCH)
        JudgeRun.objects.filter(pk=run.pk).update(
            valid_count=counts[Parse.VALID],
            invalid_count=counts[Parse.INVALID],
            error_count=counts[Parse.ERROR],
        )
        audit_log(
            actor=actor,
            action="judging.panel.created",
            project=project,
            obj=run,
            after={"rule": rule, "members": [r.name for r in members], "records": run.total},
        )
        detect_disagreements(project_id=project.pk, record_ids=record_ids)
    run.refresh_from_db()
    return run


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
