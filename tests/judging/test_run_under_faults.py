"""A run over 500 records while the endpoint misbehaves: one verdict a record, counts that add
up, and the faults each end as they should (retried, invalid or an error)."""

from __future__ import annotations

import threading
from collections import Counter

from django.db.models import Count

from judging.models import JudgeRun, Verdict
from judging.protocols.rjudge import DECIDE
from judging.services.run_engine import judge_run_execute
from judging.services.runs import judge_run_create
from tests.fake_llm import (
    ChatRequest,
    FakeLLM,
    Reply,
    answer,
    hang,
    malformed,
    rate_limited,
    server_error,
)
from tests.judging.judge_runs import make_judge, numbered_records, record_number

RECORDS = 500


class FaultyEndpoint:
    """Answers by the record's number: n % 10 says which fault the record meets.

    0: 500 on every attempt (an error)     1: one 429 with Retry-After: 1, then answers
    2: one hang past the timeout, then answers     3: malformed JSON (an error)
    4: text in no format at the second step (invalid)     5: safe     others: unsafe
    """

    def __init__(self) -> None:
        self.seen: Counter[tuple[int, bool]] = Counter()
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply:
        number, deciding = record_number(request), request.last_message == DECIDE
        with self.lock:
            self.seen[number, deciding] += 1
            first = self.seen[number, deciding] == 1
        kind = number % 10
        if kind == 0:
            return server_error()
        if kind == 1 and first:
            return rate_limited(retry_after=1)
        if kind == 2 and first:
            return hang(1.5)
        if kind == 3:
            return malformed()
        if not deciding:
            return answer(f"Record {number} looks risky.", prompt_tokens=100, completion_tokens=10)
        text = {4: "Let me tell you about the weather instead.", 5: "safe"}.get(kind, "unsafe")
        return answer(text, prompt_tokens=120, completion_tokens=1)


def test_a_run_under_faults_ends_with_one_verdict_per_record_and_counts_that_add_up(cast) -> None:
    records = numbered_records(cast.project, RECORDS)
    number_of = {record.pk: int(record.external_id) for record in records}
    endpoint = FaultyEndpoint()
    with FakeLLM(endpoint) as llm:
        judge = make_judge(cast.project, llm.base_url, concurrency=64)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)

        judge_run_execute(run_id=run.pk)

    run.refresh_from_db()
    verdicts = list(run.verdicts.all())
    assert run.state == JudgeRun.State.SUCCEEDED
    assert len(verdicts) == len({v.record_id for v in verdicts}) == RECORDS == run.total
    by_kind: dict[str, Counter] = {}
    for verdict in verdicts:
        kind = number_of[verdict.record_id] % 10
        by_kind.setdefault(verdict.parse_status, Counter())[kind] += 1
    assert by_kind == {
        "error": Counter({0: 50, 3: 50}),
        "invalid": Counter({4: 50}),
        "valid": Counter({1: 50, 2: 50, 5: 50, 6: 50, 7: 50, 8: 50, 9: 50}),
    }
    counts = dict(run.verdicts.values_list("parse_status").annotate(n=Count("id")))
    assert (run.valid_count, run.invalid_count, run.error_count) == (350, 50, 100)
    assert counts == {"valid": 350, "invalid": 50, "error": 100}
    assert run.valid_count + run.invalid_count + run.error_count == run.total
    assert run.tokens_in == sum(v.tokens_in for v in verdicts) == 400 * 220
    assert run.tokens_out == sum(v.tokens_out for v in verdicts) == 400 * 11


def test_each_fault_leaves_its_trace_in_the_verdict(cast) -> None:
    numbered_records(cast.project, 10)
    with FakeLLM(FaultyEndpoint()) as llm:
        judge = make_judge(cast.project, llm.base_url)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)

        judge_run_execute(run_id=run.pk)

    verdict = {
        int(v.record.external_id) % 10: v
        for v in Verdict.objects.filter(run=run).select_related("record")
    }
    assert verdict[0].error.startswith("The endpoint answered 500")
    assert verdict[0].attempts == 3  # the first try and two retries
    # Each of the two steps met the fault once, then was retried.
    assert verdict[1].parse_status == "valid" and verdict[1].attempts == 4
    assert verdict[1].latency_ms >= 2000  # it waited as Retry-After said
    assert verdict[2].parse_status == "valid" and verdict[2].attempts == 4
    assert verdict[2].latency_ms >= 2000  # the client waited out its timeout
    assert verdict[3].error.startswith("The endpoint's answer was not valid JSON")
    assert verdict[3].attempts == 1
    assert verdict[4].parse_status == "invalid"
    assert verdict[4].analysis == "Record 4 looks risky."
    assert verdict[4].raw_output == "Let me tell you about the weather instead."
    assert (verdict[5].label, verdict[5].analysis) == ("safe", "Record 5 looks risky.")
    assert verdict[5].raw_output == "safe"
    assert (verdict[5].tokens_in, verdict[5].tokens_out) == (220, 11)
    assert verdict[7].label == "unsafe"
