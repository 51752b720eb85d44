"""A run's records cut into chunks, and the chunks claimed by workers (see RunChunk)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from judging.models import JudgeRun, RunChunk, Verdict

Chunk = RunChunk.State


def chunks_cut(*, run: JudgeRun) -> int:
    """Cut the records the run has still to judge into waiting chunks, replacing any earlier
    ones; the number of chunks. Called in the transaction that hands the run to workers, which
    holds the run's row: a worker still holding an earlier chunk loses it at its next commit."""
    RunChunk.objects.filter(run=run).delete()
    verdicts = Verdict.objects.filter(run=run)
    if run.retry_errors:
        verdicts = verdicts.exclude(parse_status=Verdict.Parse.ERROR)
    judged = set(verdicts.values_list("record_id", flat=True))
    remaining = [record_id for record_id in run.record_ids if record_id not in judged]
    size = settings.JUDGE_RUN_CHUNK_SIZE
    chunks = [
        RunChunk(run=run, number=number, record_ids=remaining[start : start + size])
        for number, start in enumerate(range(0, len(remaining), size))
    ]
    RunChunk.objects.bulk_create(chunks)
    return len(chunks)


def chunk_claim(*, run_id: int, claim: str, worker: str) -> RunChunk | None:
    """Take the run's first chunk that waits, or whose lease ran out, for this worker; None when
    there is none. Chunks another worker is claiming this instant are skipped, not waited for;
    the conditional update makes the claim exact where rows cannot be locked (SQLite)."""
    while True:
        now = timezone.now()
        claimable = Q(state=Chunk.WAITING) | Q(state=Chunk.TAKEN, lease_until__lt=now)
        with transaction.atomic():
            candidate = (
                RunChunk.objects.filter(claimable, run_id=run_id)
                .order_by("number")
                .select_for_update(skip_locked=True)
                .only("pk")
                .first()
            )
            if candidate is None:
                return None
            taken = RunChunk.objects.filter(claimable, pk=candidate.pk).update(
                state=Chunk.TAKEN, claim=claim, worker=worker, lease_until=_lease_end(now)
            )
        if taken == 1:
            return RunChunk.objects.get(pk=candidate.pk)


def chunks_renew(*, chunk_ids: list[int], claim: str) -> bool:
    """Extend this worker's leases; False if any of its chunks was taken over or cut anew."""
    if not chunk_ids:
        return True
    renewed = RunChunk.objects.filter(pk__in=chunk_ids, claim=claim, state=Chunk.TAKEN).update(
        lease_until=_lease_end(timezone.now())
    )
    return renewed == len(chunk_ids)


def chunks_release(*, chunk_ids: list[int], claim: str) -> None:
    """Hand this worker's chunks back to any worker, at once: it steps aside."""
    if chunk_ids:
        RunChunk.objects.filter(pk__in=chunk_ids, claim=claim, state=Chunk.TAKEN).update(
            state=Chunk.WAITING, claim="", lease_until=None
        )


def chunks_done(*, chunk_ids: list[int], claim: str) -> None:
    if chunk_ids:
        RunChunk.objects.filter(pk__in=chunk_ids, claim=claim).update(state=Chunk.DONE)


def chunks_open(run_id: int) -> bool:
    """Whether any chunk of the run is not done yet: waiting, or held by a worker."""
    return RunChunk.objects.filter(run_id=run_id).exclude(state=Chunk.DONE).exists()


def _lease_end(now: datetime) -> datetime:
    return now + timedelta(seconds=settings.JUDGE_RUN_STALE_SECONDS)
