"""A worker's share of a judge run: the body of the run_judge Celery task.

A worker joins the run (pending becomes running; a running run is joined as it is), then claims
its chunks one after another (judging/services/run_engine/chunks.py) and judges their records
that have no verdict yet, as many calls at once as the judge allows, from a thread pool; only
this thread touches the database. It claims the next chunk when the last record of the one
before has been handed to a call, so that its calls never run dry between chunks. Every second,
or every FLUSH_SIZE answers, it commits the verdicts that arrived with the run's counters, its
heartbeat and its chunks' leases (commits.py): a worker killed at any moment loses only its
calls in flight, and its chunks are taken over once their lease runs out. The same commit reads
the run's state, so a cancel, a resume or a budget reached is seen by every worker within a
second, and a worker that lost a chunk (its lease had run out) stops. When no chunk is left to
claim, a worker waits beside those that hold the last ones, in case one of them dies, and the
first to find every chunk done closes the run.

Every call waits for the run's turn at its connection's limits, shared fairly with the other
projects and runs on the connection (judging/limits.py). A run whose next call would wait
longer than JUDGE_LIMIT_PATIENCE_SECONDS does not hold its worker meanwhile: it lets its calls
in flight end, commits, hands its chunks back and sends itself to a worker again for when its
turn is near; the records it had not judged keep no verdict and are judged then. A run that
is cancelled while its calls wait for their turn stops waiting at once. So that no run keeps
the workers from the other jobs (another project's run, an import), a worker also steps aside
after JUDGE_RUN_SLICE_SECONDS on a run, to the back of the queue.

A run retrying its errored records (`retry_errors`) judges those records again, and each new
verdict replaces the error in the transaction that writes it.

A run stops early, as failed, when the endpoint itself fails for several records in a row, in
the order their answers arrive at one worker (STOP_AFTER): 3 when it cannot be reached, refuses
the key or access (401, 403) or knows no such model (404), which no retry mends; 10 for server
errors (5xx and 429) and timeouts, each of which the client has already retried with backoff.
Any other outcome of a call, even an answer that cannot be parsed, shows the endpoint working
and breaks the streak; a record that cannot be judged at all (its turns unreadable) neither
breaks nor extends it. The records not judged yet keep no verdict: resuming the run judges them.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from django.conf import settings
from django.db.models.functions import Coalesce
from django.utils import timezone

from curation.jobs import job_send
from curation.models import Record
from judging.client import CallFailed, ChatClient, EndpointUnavailable, Failure
from judging.limits import Caller, LimitWait
from judging.models import JudgeRun, Verdict
from judging.protocols import Case, JudgeProtocol, TaskFacts, protocol_for, storable
from judging.services.judges import endpoint_of
from judging.services.run_engine.chunks import chunk_claim, chunks_open, chunks_release
from judging.services.run_engine.commits import run_fail, run_finish, verdicts_commit
from judging.signals import verdicts_saved

logger = logging.getLogger(__name__)

State = JudgeRun.State
Parse = Verdict.Parse
# Verdicts are committed, the heartbeat and leases written and the state read this often
# (seconds)...
FLUSH_SECONDS = 1.0
# ...or as soon as this many answers wait.
FLUSH_SIZE = 200
# Records in a row whose calls failed this way that stop the run (see the module's docstring).
STOP_AFTER: dict[Failure, int] = {
    Failure.UNREACHABLE: 3,
    Failure.REFUSED: 3,
    Failure.NOT_FOUND: 3,
    Failure.SERVER: 10,
    Failure.TIMEOUT: 10,
}


def judge_run_execute(*, run_id: int, worker: str = "") -> None:
    """Judge the run's chunks until none is left, or the run is cancelled or stopped; safe to
    call twice and from any number of workers at once."""
    if not _join(run_id):
        logger.info("Judge run %s is not waiting for workers; nothing to do", run_id)
        return
    run = JudgeRun.objects.defer("record_ids", "report").get(pk=run_id)
    try:
        protocol = protocol_for(run.judge_snapshot)
        client = ChatClient(
            endpoint_of(run.judge_snapshot),
            caller=Caller(group=f"project:{run.project_id}", name=f"run:{run_id}"),
            patience=settings.JUDGE_LIMIT_PATIENCE_SECONDS,
        )
    except EndpointUnavailable as error:
        run_fail(run_id, str(error))
        return
    worker = worker or f"{socket.gethostname()}:{os.getpid()}"
    try:
        with client:
            _Execution(run, protocol, client, worker).run()
    except Exception:
        logger.exception("Judge run %s stopped on an unexpected error", run_id)
        run_fail(run_id, "The run stopped on an unexpected error; resume it to go on.")


def case_of(record: Record) -> Case:
    """What a judge sees of a record. Raises ValueError when its turns cannot be read."""
    task = record.task_link.task
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


def _join(run_id: int) -> bool:
    """Start the run if it waits for a worker; whether it is running, for this worker to join."""
    now = timezone.now()
    runs = JudgeRun.objects.filter(pk=run_id, source=JudgeRun.Source.JUDGE)
    started = runs.filter(state=State.PENDING).update(
        state=State.RUNNING,
        heartbeat_at=now,
        started_at=Coalesce("started_at", now),
        finished_at=None,
        error="",
        rate=None,
        rate_samples=[],
        updated_at=now,
    )
    return started == 1 or runs.filter(state=State.RUNNING).exists()


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
        self, run: JudgeRun, protocol: JudgeProtocol, client: ChatClient, worker: str
    ) -> None:
        self.run_id = run.pk
        self.project_id = run.project_id
        self.retry_errors = run.retry_errors
        self.claim = secrets.token_hex(16)
        self.worker = worker
        self.protocol = protocol
        self.client = client
        self.concurrency = client.endpoint.concurrency
        self.streak = _Streak()
        # The chunks this worker holds, each with its records handed out and not committed
        # yet; those whose every record has been handed out are `fed`.
        self.outstanding: dict[int, int] = {}
        self.fed: set[int] = set()
        # Chunks with a record handed out and left unjudged, and when to come back for them:
        # set once a call would wait too long for its turn at the limits.
        self.unfinished: set[int] = set()
        self.back_in: float | None = None
        self.started = time.monotonic()
        self.slice_seconds = settings.JUDGE_RUN_SLICE_SECONDS

    def run(self) -> None:
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix=f"judge-run-{self.run_id}")
        try:
            while self._judge_chunks(pool):
                if not chunks_open(self.run_id):
                    run_finish(self.run_id)
                    return
                # Other workers hold the last chunks: wait beside them, beating, and take one
                # over if its lease runs out.
                time.sleep(FLUSH_SECONDS)
                if not self._commit([]):
                    return
        finally:
            # Calls still in flight after a cancel or an early stop are abandoned: nothing will
            # write them.
            pool.shutdown(wait=False, cancel_futures=True)

    def _judge_chunks(self, pool: ThreadPoolExecutor) -> bool:
        """Judge chunk after chunk until none is left to claim: True then, False when this
        worker must stop."""
        items = self._items()
        in_flight: dict[Future[tuple[Verdict, CallFailed | None]], int] = {}
        answered: list[tuple[int, Verdict]] = []
        exhausted = False
        last_commit = time.monotonic()
        while True:
            if self.back_in is None and time.monotonic() - self.started > self.slice_seconds:
                # Its turn at the worker is over: the jobs queued behind it take theirs.
                self.back_in = 0.0
            while not exhausted and self.back_in is None and len(in_flight) < self.concurrency:
                item = next(items, None)
                if item is None:
                    exhausted = True
                elif isinstance(item[1], Verdict):
                    answered.append((item[0], item[1]))
                else:
                    in_flight[pool.submit(self._judge, item[1])] = item[0]
            if self.back_in is not None and not in_flight:
                return self._step_aside(answered)
            if exhausted and not in_flight:
                return self._commit(answered)
            timeout = max(0.0, FLUSH_SECONDS - (time.monotonic() - last_commit))
            done, _ = wait(in_flight, timeout, return_when=FIRST_COMPLETED)
            stop = False
            for future in done:
                chunk_id = in_flight.pop(future)
                try:
                    verdict, failure = future.result()
                except LimitWait as limited:
                    self.outstanding[chunk_id] -= 1
                    self.unfinished.add(chunk_id)
                    self.back_in = max(self.back_in or 0.0, limited.seconds)
                    continue
                answered.append((chunk_id, verdict))
                stop = self.streak.see(failure) or stop
            if stop:
                if self._commit(answered):
                    run_fail(self.run_id, self.streak.reason)
                return False
            if len(answered) >= FLUSH_SIZE or time.monotonic() - last_commit >= FLUSH_SECONDS:
                if not self._commit(answered):
                    return False
                answered, last_commit = [], time.monotonic()

    def _items(self) -> Iterator[tuple[int, Case | Verdict]]:
        """The records of chunk after chunk, claimed as the last is handed out: each with its
        chunk, as a case to judge or an error verdict."""
        while (
            chunk := chunk_claim(run_id=self.run_id, claim=self.claim, worker=self.worker)
        ) is not None:
            self.outstanding[chunk.pk] = 0
            for item in self._cases(self._remaining(chunk.record_ids)):
                self.outstanding[chunk.pk] += 1
                yield chunk.pk, item
            self.fed.add(chunk.pk)

    def _commit(self, answered: list[tuple[int, Verdict]]) -> bool:
        """Commit the answers (commits.py); False when this worker must stop."""
        for chunk_id, _ in answered:
            self.outstanding[chunk_id] -= 1
        done = [
            chunk_id
            for chunk_id in self.fed
            if not self.outstanding[chunk_id] and chunk_id not in self.unfinished
        ]
        carry_on, judged = verdicts_commit(
            run_id=self.run_id,
            verdicts=[verdict for _, verdict in answered],
            retry_errors=self.retry_errors,
            claim=self.claim,
            held=[chunk_id for chunk_id in self.outstanding if chunk_id not in done],
            done=done,
        )
        for chunk_id in done:
            del self.outstanding[chunk_id]
            self.fed.discard(chunk_id)
        if judged:
            self._detect_disagreements(judged)
        if not carry_on:
            logger.info("Judge run %s ended, or this worker lost a chunk; it stops", self.run_id)
        return carry_on

    def _step_aside(self, answered: list[tuple[int, Verdict]]) -> bool:
        """Commit, hand the chunks back and come back when the run's turn is near, or at once
        behind the jobs queued (see the module's docstring); always False: this worker
        stops."""
        if self._commit(answered):
            chunks_release(chunk_ids=list(self.outstanding), claim=self.claim)
            # Back before the run's heartbeat would look stale, to keep it from being resumed.
            back_in = min(self.back_in or 0.0, settings.JUDGE_RUN_STALE_SECONDS / 2)
            job_send("judging.tasks.run_judge", self.run_id, countdown=back_in)
            logger.info("Judge run %s steps aside: back in %.1f s", self.run_id, back_in)
        return False

    def _remaining(self, record_ids: list[int]) -> list[int]:
        """The chunk's records to judge: those without a verdict, and those with an error when
        the run retries them."""
        verdicts = Verdict.objects.filter(run_id=self.run_id, record_id__in=record_ids)
        if self.retry_errors:
            verdicts = verdicts.exclude(parse_status=Parse.ERROR)
        judged = set(verdicts.values_list("record_id", flat=True))
        return [record_id for record_id in record_ids if record_id not in judged]

    def _cases(self, record_ids: list[int]) -> Iterator[Case | Verdict]:
        """The cases to judge in the chunk's order, or an error verdict for a record that
        cannot be judged. Records deleted since the run was created are skipped."""
        records = Record.objects.filter(pk__in=record_ids).select_related(
            "category", "scenario", "task_link__task__risk_category"
        )
        by_id = {record.pk: record for record in records}
        for record_id in record_ids:
            record = by_id.get(record_id)
            if record is not None:
                yield self._case_or_error(record)

    def _case_or_error(self, record: Record) -> Case | Verdict:
        if self.protocol.needs_task and record.task_link.task_id is None:
            return self._error(record.pk, "The record belongs to no task, which this judge needs.")
        try:
            return case_of(record)
        except ValueError as error:
            return self._error(record.pk, f"The record's interaction cannot be read: {error}")

    def _judge(self, case: Case) -> tuple[Verdict, CallFailed | None]:
        """One record, in a pool thread: an error is a verdict too. With it, the failed call
        that made it an error, if one did. Raises LimitWait alone: the record waits for later."""
        calls = _Calls(self.client)
        try:
            outcome = self.protocol.judge(case, calls.ask)
        except CallFailed as failure:
            return self._error(case.record_id, str(failure), calls), failure
        except LimitWait:
            raise
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

    def _detect_disagreements(self, record_ids: list[int]) -> None:
        try:
            verdicts_saved.send(sender=JudgeRun, project_id=self.project_id, record_ids=record_ids)
        except Exception:
            # The verdicts are in; a failed detection must not stop the run. Detection runs
            # again for these records whenever another verdict or label arrives.
            logger.exception("Disagreement detection failed in judge run %s", self.run_id)
