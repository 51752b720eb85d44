"""Judges aligned from settled cases: a new version quoting settled cases as worked examples,
the version a judge runs with, and an evaluation of a version against another.

An evaluation judges, with both versions, the settled records that neither quotes: a version
is never measured on a case it was shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Max

from alignment import selectors
from curation.errors import DomainError
from curation.services.audit import audit_log
from judging.models import Judge, JudgeEvaluation, JudgeVersion
from judging.protocols import protocol_for
from judging.services.judges import judge_snapshot
from judging.services.runs import judge_run_create

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def judge_version_create(
    *,
    actor: User | None,
    judge: Judge,
    record_ids: list[int] | None = None,
    count: int = selectors.DEFAULT_EXAMPLES,
    note: str = "",
) -> JudgeVersion:
    """A new version of the judge quoting settled cases as worked examples: the records of
    `record_ids` if given (each must be settled), else the `count` most contested, one per
    category. The cases are copied into the version as they are now."""
    protocol = protocol_for(judge_snapshot(judge))
    if protocol.answer != "label":
        raise DomainError("Only judges that answer safe or unsafe learn from settled labels.")
    cases = selectors.settled_cases(judge.project, needs_task=protocol.needs_task)
    if record_ids is not None:
        by_id = {case.record_id: case for case in cases}
        unsettled = [pk for pk in record_ids if pk not in by_id]
        if unsettled:
            raise DomainError("Only settled records can be worked examples.")
        chosen = [by_id[pk] for pk in dict.fromkeys(record_ids)]
        picked = JudgeVersion.Picked.BY_HAND
    else:
        chosen = selectors.most_contested(cases, count)
        picked = JudgeVersion.Picked.AUTOMATIC
    if not 1 <= len(chosen) <= selectors.MAX_EXAMPLES:
        raise DomainError(
            f"A version quotes between 1 and {selectors.MAX_EXAMPLES} settled cases"
            + ("; this project has none yet." if not cases else ".")
        )
    records = judge.project.records.select_related(
        "category", "scenario", "task_link__task"
    ).in_bulk([case.record_id for case in chosen])
    examples = [
        selectors.example_of(records[case.record_id], case.label, case.reason) for case in chosen
    ]
    with transaction.atomic():
        # Serialise numbering per judge: two managers saving at once get distinct numbers.
        Judge.objects.select_for_update().filter(pk=judge.pk).first()
        latest = judge.versions.aggregate(n=Max("number"))["n"] or 1
        version = JudgeVersion(
            judge=judge,
            number=latest + 1,
            picked=picked,
            examples=examples,
            note=note.strip(),
            created_by=actor if actor is not None and actor.is_authenticated else None,
        )
        version.full_clean()
        version.save()
        audit_log(
            actor=actor,
            action="judging.judge.version_created",
            project=judge.project,
            obj=judge,
            after={
                "version": version.number,
                "picked": picked,
                "examples": [example["external_id"] for example in examples],
            },
        )
    return version


def judge_version_activate(
    *, actor: User | None, judge: Judge, version: JudgeVersion | None
) -> Judge:
    """Make `version` (none: version 1, the prompt as written) the one runs start with."""
    if version is not None and version.judge_id != judge.pk:
        raise DomainError("The version belongs to another judge.")
    with transaction.atomic():
        before = judge.active_version.number if judge.active_version else 1
        judge.active_version = version
        judge.save(update_fields=["active_version", "updated_at"])
        audit_log(
            actor=actor,
            action="judging.judge.version_activated",
            project=judge.project,
            obj=judge,
            before={"version": before},
            after={"version": version.number if version else 1},
        )
    return judge


def judge_evaluation_start(
    *,
    actor: User | None,
    candidate: JudgeVersion,
    baseline: JudgeVersion | None = None,
) -> JudgeEvaluation:
    """Run the candidate and the baseline (none: version 1) over the judge's settled records
    that neither quotes, and keep the pair to compare them."""
    judge = candidate.judge
    if baseline is not None and baseline.judge_id != judge.pk:
        raise DomainError("The versions compared belong to two judges.")
    if baseline is not None and baseline.pk == candidate.pk:
        raise DomainError("A version is compared with another one.")
    needs_task = protocol_for(judge_snapshot(judge, candidate)).needs_task
    cases = selectors.settled_cases(judge.project, needs_task=needs_task)
    quoted = [candidate.example_record_ids, baseline.example_record_ids if baseline else []]
    record_ids = selectors.held_out(cases, *quoted)
    if not record_ids:
        raise DomainError(
            "Every settled record is a worked example of one of the versions: settle more "
            "disagreements to evaluate on."
        )
    names = {
        version: f"v{version.number}" if version else "v1" for version in (baseline, candidate)
    }
    with transaction.atomic():
        runs = [
            judge_run_create(
                actor=actor,
                project=judge.project,
                judge=judge,
                version=version,
                chosen=record_ids,
                name=f"{judge.name} {names[version]} · evaluation of v{candidate.number}",
            )
            for version in (baseline, candidate)
        ]
        evaluation = JudgeEvaluation.objects.create(
            judge=judge,
            baseline=baseline,
            candidate=candidate,
            baseline_run=runs[0],
            candidate_run=runs[1],
            record_ids=record_ids,
            created_by=actor if actor is not None and actor.is_authenticated else None,
        )
        audit_log(
            actor=actor,
            action="judging.judge.evaluation_started",
            project=judge.project,
            obj=judge,
            after={
                "candidate": candidate.number,
                "baseline": baseline.number if baseline else 1,
                "records": len(record_ids),
                "runs": [run.pk for run in runs],
            },
        )
    return evaluation
