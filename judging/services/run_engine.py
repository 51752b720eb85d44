"""Executing a judge run: the body of the run_judge Celery task.

The task claims the run with a conditional UPDATE (pending, or running with a stale heartbeat,
becomes running with this worker's token), then judges the run's records that have no verdict
yet. Calls run in a thread pool, as many at once as the judge allows; only this thread touches
the database. Every second, or every FLUSH_SIZE answers, it commits the verdicts that arrived
with the run's counters and heartbeat in one transaction that holds the run's row, so verdicts
and counts never disagree, and a worker killed at any moment loses only calls in flight. The
same transaction reads the run's state: a cancel is seen within a second, and a worker whose
token was replaced (its heartbeat had gone stale and another worker took the run over) stops.
Each (run, record) has at most one verdict: the unique constraint, the check under the row lock
and an insert that ignores conflicts all see to it. A run retrying its errored records
(`retry_errors`) judges those records again, and each new verdict replaces the error in the
transaction that writes it.

A run stops early, as failed, when the endpoint itself fails for several records in a row, in
the order their answers arrive (STOP_AFTER): 3 when it cannot be reached, refuses the key or
access (401, 403) or knows no such model (404), which no retry mends; 10 for server errors (5xx
and 429) and timeouts, each of which the client has already retried with backoff. Any other
outcome of a call, even an answer that cannot be parsed, shows the endpoint working and breaks
the streak; a record that cannot be judged at all (its turns unreadable) neither breaks nor
extends it. The records not judged yet keep no verdict: resuming the run judges them.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from curation.models import Record
from curation.services.audit import audit_log
from judging.client import CallFailed, ChatClient, EndpointUnavailable, Failure
from judging.models import JudgeRun, Verdict
from judging.protocols import Case, JudgeProtocol, TaskFacts, protocol_for, storable
from judging.selectors import run_top_errors
from judging.services.judges import endpoint_of

logger = logging.getLogger(__name__)

State = JudgeRun.State
Parse = Verdict.Parse
ACTIVE = (State.RUNNING, State.CANCELLING)
# Verdicts are committed, the heartbeat written and the state read this often (seconds)...
FLUSH_SECONDS = 1.0
# ...or as soon as this many answers wait.
FLUSH_SIZE = 200
# Records read from the database at a time.
LOAD_BATCH = 500
# Flushes the rate (and so the time left) is measured over.
RATE_WINDOW = 10
# Records in a row whose calls failed this way that stop the run (see the module's docstring).
STOP_AFTER: dict[Failure, int] = {
    Failure.UNREACHABLE: 3,
    Failure.REFUSED: 3,
    Failure.NOT_FOUND: 3,
    Failure.SERVER: 10,
    Failure.TIMEOUT: 10,
}
# The run's columns a flush reads and writes; the record ids stay in the database.
_LIGHT = ("record_ids", "judge_snapshot", "selection", "report")


def judge_run_execute(*, run_id: int) -> None:
    """Run a judge run to its end, or until it is cancelled; safe to call twice."""
    claim = _claim(run_id)
    if claim is None:
        logger.info("Judge run %s is not waiting for a worker; nothing to do", run_id)
        return
    run = JudgeRun.objects.get(pk=run_id)
    try:
        protocol = protocol_for(run.judge_snapshot)
        client = ChatClient(endpoint_of(run.judge_snapshot))
    except EndpointUnavailable as error:
        _fail(run_id, claim, str(error))
        return
    try:
        with client:
            _Execution(run, claim, protocol, client).run()
    except Exception:
        logger.exception("Judge run %s stopped on an unexpected error", run_id)
        _fail(run_id, claim, "The run stopped on an unexpected error; resume it to go on.")


def case_of(record: Record) -> Case:
    """What a judge sees of a record. Raises ValueError when its turns cannot be read."""
    task = record.task
    return Case(
        record_id=record.pk,
        external_id=record.external_id,
        category=record.category.name,
        scenario=record.scenario.name,
        profile=record.profile,
        goal=record.goal,
        turns=record.turns,
        task=None
        if task is None
        else TaskFacts(
            sector=task.sector,
            occupation=task.occupation,
            prompt=task.prompt,
            risk_category=task.risk_category.name if task.risk_category else "",
            malicious_motivation=task.malicious_motivation,
            risk_outcome=task.risk_outcome,
            unsafe_criteria=task.unsafe_criteria,
            safe_criteria=task.safe_criteria,
        ),
    )


def _claim(run_id: int) -> str | None:
    """Take the run for this worker if no live worker holds it; its token, or None."""
    claim = secrets.token_hex(16)
    now = timezone.now()
    stale = now - timedelta(seconds=settings.JUDGE_RUN_STALE_SECONDS)
    taken = (
        JudgeRun.objects.filter(pk=run_id, source=JudgeRun.Source.JUDGE)
        .filter(
            Q(state=State.PENDING)
            | Q(state=State.RUNNING, heartbeat_at__lt=stale)
            | Q(state=State.RUNNING, heartbeat_at__isnull=True)
        )
        .update(
            state=State.RUNNING,
            claim=claim,
            heartbeat_at=now,
            started_at=Coalesce("started_at", now),
            finished_at=None,
            error="",
            updated_at=now,
        )
    )
    return claim if taken == 1 else None


def _fail(run_id: int, claim: str, message: str) -> None:
    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().defer(*_LIGHT).get(pk=run_id)
        if run.claim != claim or run.state not in ACTIVE:
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


class _Calls:
    """The calls made for one record: their tokens, attempts and time, added up."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.tokens_in = self.tokens_out = self.attempts = self.latency_ms = 0

    def ask(self, messages: list[dict[str, str]]) -> str:
        try:
            completion = self.client.complete(messages)
        except CallFailed as failure:
            self.attempts += failure.attempts
            self.latency_ms += failure.latency_ms
            raise
        self.tokens_in += completion.tokens_in
        self.tokens_out += completion.tokens_out
        self.attempts += completion.attempts
        self.latency_ms += completion.latency_ms
        return completion.text


class _Streak:
    """Records in a row whose calls failed on the endpoint itself (see STOP_AFTER)."""

    def __init__(self) -> None:
        self.count = 0
        self.last: CallFailed | None = None

    def see(self, failure: CallFailed | None) -> bool:
        """Count one record's outcome; True when the run must stop."""
        if failure is None or failure.kind not in STOP_AFTER:
            self.count, self.last = 0, None
            return False
        self.count, self.last = self.count + 1, failure
        return self.count >= STOP_AFTER[failure.kind]

    @property
    def reason(self) -> str:
        return f"Stopped after {self.count} records in a row failed: {self.last}"


class _Execution:
    def __init__(
        self, run: JudgeRun, claim: str, protocol: JudgeProtocol, client: ChatClient
    ) -> None:
        self.run_id = run.pk
        self.project_id = run.project_id
        self.record_ids = run.record_ids
        self.retry_errors = run.retry_errors
        self.claim = claim
        self.protocol = protocol
        self.client = client
        self.concurrency = client.endpoint.concurrency
        # (time, verdicts committed) of the last flushes, for the rate.
        self.flushes: deque[tuple[float, int]] = deque(maxlen=RATE_WINDOW)
        self.streak = _Streak()

    def run(self) -> None:
        cases = self._cases(self._remaining())
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix=f"judge-run-{self.run_id}")
        in_flight: set[Future[Verdict]] = set()
        answered: list[Verdict] = []
        exhausted = False
        last_flush = time.monotonic()
        try:
            while True:
                while not exhausted and len(in_flight) < self.concurrency:
                    item = next(cases, None)
                    if item is None:
                        exhausted = True
                    elif isinstance(item, Verdict):
                        answered.append(item)
                    else:
                        in_flight.add(pool.submit(self._judge, item))
                if exhausted and not in_flight:
                    break
                done, in_flight = wait(in_flight, FLUSH_SECONDS, return_when=FIRST_COMPLETED)
                stop = False
                for future in done:
                    verdict, failure = future.result()
                    answered.append(verdict)
                    stop = self.streak.see(failure) or stop
                if stop:
                    if self._flush(answered):
                        _fail(self.run_id, self.claim, self.streak.reason)
                    return
                if len(answered) >= FLUSH_SIZE or time.monotonic() - last_flush >= FLUSH_SECONDS:
                    if not self._flush(answered):
                        return
                    answered, last_flush = [], time.monotonic()
            if self._flush(answered):
                self._finish()
        finally:
            # Calls still in flight after a cancel or an early stop are abandoned: nothing will
            # write them.
            pool.shutdown(wait=False, cancel_futures=True)

    def _remaining(self) -> list[int]:
        """The run's records to judge: those without a verdict, and those with an error when
        the run retries them."""
        verdicts = Verdict.objects.filter(run_id=self.run_id)
        if self.retry_errors:
            verdicts = verdicts.exclude(parse_status=Parse.ERROR)
        judged = set(verdicts.values_list("record_id", flat=True))
        return [record_id for record_id in self.record_ids if record_id not in judged]

    def _cases(self, record_ids: list[int]) -> Iterator[Case | Verdict]:
        """The cases to judge in the run's order, or an error verdict for a record that cannot
        be judged. Records deleted since the run was created are skipped."""
        for start in range(0, len(record_ids), LOAD_BATCH):
            chunk = record_ids[start : start + LOAD_BATCH]
            records = Record.objects.filter(pk__in=chunk).select_related(
                "category", "scenario", "task__risk_category"
            )
            by_id = {record.pk: record for record in records}
            for record_id in chunk:
                record = by_id.get(record_id)
                if record is None:
                    continue
                yield self._case_or_error(record)

    def _case_or_error(self, record: Record) -> Case | Verdict:
        if self.protocol.needs_task and record.task_id is None:
            return self._error(record.pk, "The record belongs to no task, which this judge needs.")
        try:
            return case_of(record)
        except ValueError as error:
            return self._error(record.pk, f"The record's interaction cannot be read: {error}")

    def _judge(self, case: Case) -> tuple[Verdict, CallFailed | None]:
        """One record, in a pool thread: never raises, an error is a verdict too. With it, the
        failed call that made it an error, if one did."""
        calls = _Calls(self.client)
        try:
            outcome = self.protocol.judge(case, calls.ask)
        except CallFailed as failure:
            return self._error(case.record_id, str(failure), calls), failure
        except Exception:
            logger.exception("Judging record %s in run %s failed", case.record_id, self.run_id)
            return self._error(case.record_id, "The judge failed on this record.", calls), None
        verdict = Verdict(
            run_id=self.run_id,
            record_id=case.record_id,
            parse_status=outcome.parse_status,
            label=outcome.label,
            score=outcome.score,
            score_label=storable(outcome.score_label)[:100],
            analysis=storable(outcome.analysis),
            raw_output=storable(outcome.raw_output),
            error=storable(outcome.note),
            tokens_in=calls.tokens_in,
            tokens_out=calls.tokens_out,
            attempts=calls.attempts,
            latency_ms=calls.latency_ms,
        )
        return verdict, None

    def _error(self, record_id: int, message: str, calls: _Calls | None = None) -> Verdict:
        return Verdict(
            run_id=self.run_id,
            record_id=record_id,
            parse_status=Parse.ERROR,
            error=storable(message),
            tokens_in=calls.tokens_in if calls else 0,
            tokens_out=calls.tokens_out if calls else 0,
            attempts=calls.attempts if calls else 0,
            latency_ms=calls.latency_ms if calls else 0,
        )

    def _flush(self, verdicts: list[Verdict]) -> bool:
        """Commit verdicts with the counts and the heartbeat; False when the worker must stop."""
        now = timezone.now()
        with transaction.atomic():
            run = JudgeRun.objects.select_for_update().defer(*_LIGHT).get(pk=self.run_id)
            if run.claim != self.claim or run.state not in ACTIVE:
                logger.info("Judge run %s was taken over or ended; this worker stops", run.pk)
                return False
            new, replaced = _insert(self.run_id, verdicts, replace_errors=self.retry_errors)
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
            run.heartbeat_at = now
            run.rate = self._rate(len(new))
            fields = ["valid_count", "invalid_count", "error_count", "tokens_in", "tokens_out"]
            fields += ["heartbeat_at", "rate", "updated_at"]
            carry_on = run.state == State.RUNNING
            if not carry_on:
                run.state = State.CANCELLED
                run.finished_at = now
                fields += ["state", "finished_at"]
            run.save(update_fields=fields)
        if new:
            self._detect_disagreements([verdict.record_id for verdict in new])
        return carry_on

    def _finish(self) -> None:
        """Close the run, its counts recomputed from its verdicts."""
        with transaction.atomic():
            run = JudgeRun.objects.select_for_update().defer(*_LIGHT).get(pk=self.run_id)
            if run.claim != self.claim or run.state not in ACTIVE:
                return
            by_status = {
                row["parse_status"]: row
                for row in Verdict.objects.filter(run_id=run.pk)
                .order_by()
                .values("parse_status")
                .annotate(n=Count("id"), tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"))
            }
            run.valid_count = by_status.get(Parse.VALID, {}).get("n", 0)
            run.invalid_count = by_status.get(Parse.INVALID, {}).get("n", 0)
            run.error_count = by_status.get(Parse.ERROR, {}).get("n", 0)
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
                },
            )

    def _rate(self, committed: int) -> float | None:
        self.flushes.append((time.monotonic(), committed))
        if len(self.flushes) < 2:
            return None
        elapsed = self.flushes[-1][0] - self.flushes[0][0]
        judged = sum(count for _, count in list(self.flushes)[1:])
        return judged / elapsed if elapsed > 0 else None

    def _detect_disagreements(self, record_ids: list[int]) -> None:
        from judging.services.disagreements import detect_disagreements

        try:
            detect_disagreements(project_id=self.project_id, record_ids=record_ids)
        except Exception:
            # The verdicts are in; a failed detection must not stop the run. Detection runs
            # again for these records whenever another verdict or label arrives.
            logger.exception("Disagreement detection failed in judge run %s", self.run_id)


def _insert(
    run_id: int, verdicts: list[Verdict], *, replace_errors: bool
) -> tuple[list[Verdict], list[tuple[int, int]]]:
    """Insert the verdicts whose record has none in the run yet, or only an error that
    `replace_errors` replaces; those inserted, and the tokens (in, out) of the errors replaced.

    The caller holds the run's row, which every writer of the run's verdicts takes first, so the
    check is exact; the insert still ignores conflicts on (run, record), come what may.
    """
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
