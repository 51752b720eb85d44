"""Labels and verdicts for tests of disagreements, adjudication and metrics, written as the
annotation service and the judge runs leave them."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from annotation.models import Annotation
from curation.models import Record
from judging.models import JudgeRun, Verdict


def annotate(
    record: Record,
    annotator: AbstractBaseUser,
    verdict: str,
    *,
    safety: int | None = None,
    helpfulness: int | None = None,
) -> Annotation:
    """`annotator`'s submitted label of `record`, replacing an earlier one."""
    annotation, _ = Annotation.objects.update_or_create(
        record=record,
        annotator=annotator,
        defaults={
            "project": record.project,
            "verdict": verdict,
            "safety_score": safety,
            "helpfulness_score": helpfulness,
        },
    )
    return annotation


def judge_run(
    project, name: str, verdicts: dict[Record, str | int], *, protocol: str = "rjudge"
) -> JudgeRun:
    """A finished run with one verdict per record: "safe" / "unsafe", "invalid", "error", or a
    0-3 score."""
    run = JudgeRun.objects.create(
        project=project,
        name=name,
        judge_snapshot={"protocol": protocol},
        state=JudgeRun.State.SUCCEEDED,
        total=len(verdicts),
    )
    for record, answer in verdicts.items():
        fields: dict[str, object] = {"parse_status": Verdict.Parse.VALID}
        if isinstance(answer, int):
            fields["score"] = answer
        elif answer in ("invalid", "error"):
            fields["parse_status"] = answer
        else:
            fields["label"] = answer
        Verdict.objects.create(run=run, record=record, analysis=f"{name} thinks {answer}", **fields)
    return run
