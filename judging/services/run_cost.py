"""What a judge run is expected to cost, before it starts, from the sizes of its records.

The judge's protocol builds its prompts for a sample of the run's records exactly as a worker
would, with a stand-in answer for each call, and the prompts' characters are counted at four a
token (the rule of thumb for English text, which the answers' usage later tells precisely).
An answer's tokens are not known before it is given: the estimate takes the judge's
`max_tokens` a call when it sets one, else what the judge's earlier runs took a record, else
ASSUMED_ANSWER_TOKENS a call. The sample's figures are scaled to the run's records.
"""

from __future__ import annotations

from typing import Any

from django.db.models import F, Sum

from curation.models import Record
from judging.models import JudgeRun
from judging.models.runs import cost_of
from judging.protocols import protocol_for
from judging.services.run_engine import case_of

# Records whose prompts are built for the estimate, spread evenly over the run's.
SAMPLE = 200
CHARACTERS_PER_TOKEN = 4
# An answer's tokens when neither the judge's settings nor its history tell.
ASSUMED_ANSWER_TOKENS = 200
# What each call of the estimate answers: short, and read as a label by every protocol.
STAND_IN_ANSWER = '{"verdict": "unsafe", "reasoning": "unsafe"} unsafe'


def run_estimate(*, run: JudgeRun) -> dict[str, Any]:
    """Tokens in and out and their cost (None when the run is not priced) the run is expected
    to take, and the records sampled to tell."""
    protocol = protocol_for(run.judge_snapshot)
    step = max(1, len(run.record_ids) // SAMPLE)
    sampled_ids = run.record_ids[::step][:SAMPLE]
    records = Record.objects.filter(pk__in=sampled_ids).select_related(
        "category", "scenario", "task_link__task__risk_category"
    )
    characters = calls = sampled = 0
    for record in records:
        prompts: list[int] = []

        def ask(messages: list[dict[str, str]], prompts: list[int] = prompts) -> str:
            prompts.append(sum(len(message.get("content") or "") for message in messages))
            return STAND_IN_ANSWER

        if protocol.needs_task and record.task_link.task_id is None:
            continue
        try:
            case = case_of(record)
        except ValueError:
            # Its turns cannot be read: the run gives it an error verdict, and calls nothing.
            continue
        protocol.judge(case, ask)
        characters += sum(prompts)
        calls += len(prompts)
        sampled += 1
    scale = len(run.record_ids) / sampled if sampled else 0
    tokens_in = round(characters / CHARACTERS_PER_TOKEN * scale)
    per_record = _answer_tokens(run, calls_per_record=calls / sampled) if sampled else 0
    tokens_out = round(per_record * len(run.record_ids))
    cost = None
    if run.is_priced:
        cost = str(
            round(
                cost_of(tokens_in, tokens_out, run.price_in_per_million, run.price_out_per_million),
                4,
            )
        )
    return {"tokens_in": tokens_in, "tokens_out": tokens_out, "cost": cost, "sampled": sampled}


def _answer_tokens(run: JudgeRun, *, calls_per_record: float) -> float:
    """The tokens a record's answers are expected to take."""
    max_tokens = (run.judge_snapshot.get("parameters") or {}).get("max_tokens")
    if max_tokens:
        return float(max_tokens) * calls_per_record
    # By the judge judge_run_plan set on the run (no query): the stubs refuse the None a
    # judge_id may hold, which the judge itself, as None, still stands for in the lookup.
    earlier = (
        JudgeRun.objects.filter(judge=run.judge, source=JudgeRun.Source.JUDGE)
        .exclude(pk=run.pk)
        .aggregate(
            tokens_out=Sum("tokens_out"),
            records=Sum(F("valid_count") + F("invalid_count") + F("error_count")),
        )
    )
    if earlier["records"] and earlier["tokens_out"]:
        return earlier["tokens_out"] / earlier["records"]
    return float(ASSUMED_ANSWER_TOKENS) * calls_per_record
