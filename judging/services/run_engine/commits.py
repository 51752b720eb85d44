"""What a worker writes of a run: its verdicts with the counts, and the run's end.

Every write holds the run's row (`SELECT ... FOR UPDATE`), which every writer of the run's
verdicts and counts takes first: the counts stay those of the verdicts, whichever of the
workers commits, and the check that a record has no verdict yet is exact (the unique constraint
and an insert that ignores conflicts are there come what may).
"""

from __future__ import annotations

import time

from django.db import transaction
from django.db.models import Count, Sum
from django.utils import timezone

from curation.services.audit import audit_log
from judging.models import JudgeRun, Verdict
from judging.selectors import run_top_errors
from judging.services.run_engine.chunks import chunks_done, chunks_open, chunks_renew

State = JudgeRun.State
Parse = Verdict.Parse
ACTIVE = (State.RUNNING, State.CANCELLING)
# The run's columns a commit neither reads nor writes; the record ids stay in the database.
_LIGHT = ("record_ids", "judge_snapshot", "selection", "report")
# The rate (and so the time left) is measured over the commits of this many seconds.
RATE_SECONDS = 10


def verdicts_commit(
    *,
    run_id: int,
    verdicts: list[Verdict],
    retry_errors: bool,
    claim: str,
    held: list[int],
    done: list[int],
) -> tuple[bool, list[int]]:
    """Commit verdicts with the counts, the heartbeat and the leases of the chunks this worker
    holds (`done`: those it has finished). Whether the worker may go on (the run was not
    cancelled, stopped or cut anew, none of its chunks was taken over), and the records that
    got a verdict."""
    now = timezone.now()
    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().defer(*_LIGHT).get(pk=run_id)
        if run.state not in ACTIVE:
            return False, []
        new, replaced = _insert(run_id, verdicts, replace_errors=retry_errors)
        run.error_count -= len(replaced)
        run.tokens_in -= sum(tokens_in for tokens_in, _ in replaced)
        run.tokens_out -= sum(tokens_out for _, tokens_out in replaced)
        for verdict in new:
            if verdict.parse_status == Parse.VALID:
                run.valid_count += 1
            elif verdict.parse_status == Parse.INVALID:
                run.invalid_count += 1
            else:
                run.error_count += 1
            run.tokens_in += verdict.tokens_in
            run.tokens_out += verdict.tokens_out
        kept = chunks_renew(chunk_ids=held, claim=claim)
        chunks_done(chunk_ids=done, claim=claim)
        run.heartbeat_at = now
        _measure_rate(run)
        fields = ["valid_count", "invalid_count", "error_count", "tokens_in", "tokens_out"]
        fields += ["heartbeat_at", "rate", "rate_samples", "updated_at"]
        carry_on = run.state == State.RUNNING
        if not carry_on:
            run.state = State.CANCELLED
        elif run.budget is not None and run.cost is not None and run.cost >= run.budget:
            carry_on = False
            run.state = State.BUDGET_REACHED
            audit_log(
                actor=run.created_by,
                action="judging.run.budget_reached",
                project=run.project,
                obj=run,
                after={"budget": str(run.budget), "cost": str(run.cost), "done": run.done_count},
            )
        if not carry_on:
            run.finished_at = now
            run.rate = None
            fields += ["state", "finished_at"]
        run.save(update_fields=fields)
    return carry_on and kept, [verdict.record_id for verdict in new]


def run_fail(run_id: int, message: str) -> None:
    """End a run that a worker still runs as failed, with why, in words a manager can act on."""
    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().defer(*_LIGHT).get(pk=run_id)
        if run.state not in ACTIVE:
            return
        run.state = State.FAILED
        run.error = message
        run.finished_at = timezone.now()
        run.rate = None
        run.save(update_fields=["state", "error", "finished_at", "rate", "updated_at"])
        audit_log(
            actor=run.created_by,
            action="judging.run.failed",
            project=run.project,
            obj=run,
            after={"error": message, "done": run.done_count},
        )


def run_finish(run_id: int) -> None:
    """Close the run once every chunk is done, its counts recomputed from its verdicts; the
    first worker to find every chunk done does it."""
    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().defer(*_LIGHT).get(pk=run_id)
        if run.state not in ACTIVE or chunks_open(run_id):
            return
        by_status = {
            row["parse_status"]: row
            for row in Verdict.objects.filter(run_id=run.pk)
            .order_by()
            .values("parse_status")
            .annotate(n=Count("id"), tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"))
        }
        # A status no verdict has is missing from the rows: its count is 0.
        counts: dict[str, int] = {status: row["n"] for status, row in by_status.items()}
        run.valid_count = counts.get(Parse.VALID, 0)
        run.invalid_count = counts.get(Parse.INVALID, 0)
        run.error_count = counts.get(Parse.ERROR, 0)
        run.tokens_in = sum(row["tokens_in"] or 0 for row in by_status.values())
        run.tokens_out = sum(row["tokens_out"] or 0 for row in by_status.values())
        if run.state == State.CANCELLING:
            run.state = State.CANCELLED
        elif run.error_count and not run.valid_count + run.invalid_count:
            run.state = State.FAILED
            [(top, _)] = run_top_errors(run.pk, 1)
            run.error = f"Every record failed. The most frequent error: {top}"
        else:
            run.state = State.SUCCEEDED
        run.finished_at = run.heartbeat_at = timezone.now()
        run.rate = None
        run.retry_errors = False
        run.save()
        audit_log(
            actor=run.created_by,
            action=f"judging.run.{run.state}",
            project=run.project,
            obj=run,
            after={
                "valid": run.valid_count,
                "invalid": run.invalid_count,
                "error": run.error_count,
                "tokens_in": run.tokens_in,
                "tokens_out": run.tokens_out,
                "cost": None if run.cost is None else str(run.cost),
            },
        )


def _measure_rate(run: JudgeRun) -> None:
    """Records judged per second by all the run's workers together, over the last commits of
    any of them: each adds (time, verdicts done) to the run's samples."""
    now = time.time()
    samples = [sample for sample in run.rate_samples if sample[0] >= now - RATE_SECONDS]
    samples.append([now, run.done_count])
    run.rate_samples = samples
    elapsed = samples[-1][0] - samples[0][0]
    if elapsed >= 1:
        run.rate = (samples[-1][1] - samples[0][1]) / elapsed


def _insert(
    run_id: int, verdicts: list[Verdict], *, replace_errors: bool
) -> tuple[list[Verdict], list[tuple[int, int]]]:
    """Insert the verdicts whose record has none in the run yet, or only an error that
    `replace_errors` replaces; those inserted, and the tokens (in, out) of the errors replaced.
    The caller holds the run's row (see the module's docstring)."""
    if not verdicts:
        return [], []
    existing = dict(
        Verdict.objects.filter(
            run_id=run_id, record_id__in=[verdict.record_id for verdict in verdicts]
        ).values_list("record_id", "parse_status")
    )
    replaced: list[tuple[int, int]] = []
    if replace_errors:
        errors = Verdict.objects.filter(
            run_id=run_id,
            parse_status=Parse.ERROR,
            record_id__in=[
                record_id for record_id, status in existing.items() if status == Parse.ERROR
            ],
        )
        replaced = list(errors.values_list("tokens_in", "tokens_out"))
        errors.delete()
        existing = {
            record_id: status for record_id, status in existing.items() if status != Parse.ERROR
        }
    new = [verdict for verdict in verdicts if verdict.record_id not in existing]
    Verdict.objects.bulk_create(new, ignore_conflicts=True)
    return new, replaced
