"""Preference pairs for DPO from records of the same task or case that carry 0-3 scores.

The rule is that of the "safety training persists" study: of two responses to the same prompt,
the chosen one scores higher than the rejected one by at least a minimum gap, and scores at least
a minimum itself. "By safety" applies it to safety scores, "by helpfulness" to helpfulness scores,
"both" to both at once.

Records belong together when they answer the same benchmark task (agent runs imported for a task),
or else when they are the same case: the same scenario and the same first user request.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby, permutations
from operator import itemgetter
from typing import IO, Any

import orjson
from django.db import models
from django.db.models import QuerySet

from curation.importers.records import turns_of
from releases.models import Release

DPO_JSONL = "dpo_pairs.jsonl"
DEFAULT_MIN_GAP = 2
DEFAULT_MIN_CHOSEN = 2
# Pairs whose texts are read in one query.
TEXTS_PER_QUERY = 2000


class PairBy(models.TextChoices):
    SAFETY = "safety", "Safety scores"
    HELPFULNESS = "helpfulness", "Helpfulness scores"
    BOTH = "both", "Both safety and helpfulness"


@dataclass(frozen=True)
class PairRule:
    by: str = PairBy.SAFETY
    min_gap: float = DEFAULT_MIN_GAP
    min_chosen: float = DEFAULT_MIN_CHOSEN

    @classmethod
    def of(cls, release: Release) -> PairRule:
        options = release.options.get("dpo") or {}
        return cls(
            by=options.get("by", PairBy.SAFETY),
            min_gap=options.get("min_gap", DEFAULT_MIN_GAP),
            min_chosen=options.get("min_chosen", DEFAULT_MIN_CHOSEN),
        )

    @property
    def scales(self) -> tuple[str, ...]:
        return ("safety", "helpfulness") if self.by == PairBy.BOTH else (self.by,)

    def prefers(self, chosen: dict[str, float | None], rejected: dict[str, float | None]) -> bool:
        for scale in self.scales:
            better, worse = chosen[scale], rejected[scale]
            if better is None or worse is None:
                return False
            if better - worse < self.min_gap or better < self.min_chosen:
                return False
        return True


@dataclass(frozen=True)
class Candidate:
    record_id: int
    external_id: str
    scores: dict[str, float | None]


Pairs = list[tuple[Candidate, Candidate]]


def write_pairs(release: Release, stream: IO[bytes]) -> int:
    """Write the release's preference pairs as JSONL; return how many.

    Agent runs of a task are read task by task with their text, in one pass. Other records are
    grouped by their scenario and first request, which only their text tells: a first pass
    keeps their ids, scores and keys, and their texts are read again for a batch of groups with
    pairs at a time. Memory holds a task's records, or the ids and scores of the other records.
    """
    rule = PairRule.of(release)
    scored = release.records.filter(included=True)
    for scale in rule.scales:
        scored = scored.filter(**{f"{scale}_score__isnull": False})
    written = 0
    for group, prompt, candidates, sources in _task_groups(scored):
        pairs = _pairs_of(candidates, rule)
        if pairs:
            paired = {c.record_id for pair in pairs for c in pair}
            texts = {
                record_id: (prompt, _response(turns_of(*sources[record_id])))
                for record_id in paired
            }
            written += _write_group(release, rule, group, pairs, texts, stream)
    batch: list[tuple[str, Pairs]] = []
    batch_pairs = 0
    for group, candidates in _case_groups(scored):
        pairs = _pairs_of(candidates, rule)
        if pairs:
            batch.append((group, pairs))
            batch_pairs += len(pairs)
        if batch_pairs >= TEXTS_PER_QUERY:
            written += _write_batch(release, rule, batch, stream)
            batch, batch_pairs = [], 0
    return written + _write_batch(release, rule, batch, stream)


def _pairs_of(candidates: Iterable[Candidate], rule: PairRule) -> Pairs:
    return [
        (chosen, rejected)
        for chosen, rejected in permutations(candidates, 2)
        if rule.prefers(chosen.scores, rejected.scores)
    ]


def _write_group(
    release: Release,
    rule: PairRule,
    group: str,
    pairs: Pairs,
    texts: dict[int, tuple[str, str]],
    stream: IO[bytes],
) -> int:
    for chosen, rejected in pairs:
        stream.write(orjson.dumps(_pair(release, rule, group, chosen, rejected, texts)) + b"\n")
    return len(pairs)


def _write_batch(
    release: Release, rule: PairRule, batch: list[tuple[str, Pairs]], stream: IO[bytes]
) -> int:
    ids = {c.record_id for _, pairs in batch for pair in pairs for c in pair}
    texts = _texts(release, ids) if ids else {}
    return sum(_write_group(release, rule, group, pairs, texts, stream) for group, pairs in batch)


_FIELDS = ("record_id", "record__external_id", "safety_score", "helpfulness_score")


def _task_groups(
    scored: QuerySet,
) -> Iterator[tuple[str, str, list[Candidate], dict[int, tuple[str, str]]]]:
    """(group key, the task's prompt, its candidates, {record id: (source format, raw)}), task
    by task."""
    rows = (
        scored.filter(record__task__isnull=False)
        .order_by("record__task_id", "record_id")
        .values_list(
            "record__task_id",
            "record__task__external_id",
            "record__task__prompt",
            "record__source_format",
            "record__raw",
            *_FIELDS,
        )
        .iterator(chunk_size=TEXTS_PER_QUERY)
    )
    for _, task_rows in groupby(rows, key=itemgetter(0)):
        candidates, sources = [], {}
        for row in task_rows:
            _, task_id, prompt, source_format, raw, record_id, external_id, safety, helpful = row
            scores = {"safety": safety, "helpfulness": helpful}
            candidates.append(Candidate(record_id, external_id, scores))
            sources[record_id] = (source_format, raw)
        if len(candidates) > 1:
            yield f"task {task_id}", prompt, candidates, sources


def _case_groups(scored: QuerySet) -> Iterator[tuple[str, list[Candidate]]]:
    """(group key, its scored records in id order), groups in key order, groups of one left
    out: records of no task, grouped by scenario and first request."""
    groups: dict[str, list[Candidate]] = defaultdict(list)
    rows = (
        scored.filter(record__task__isnull=True)
        .order_by("record_id")
        .values_list("scenario", "record__source_format", "record__raw", *_FIELDS)
        .iterator(chunk_size=TEXTS_PER_QUERY)
    )
    for scenario, source_format, raw, record_id, external_id, safety, helpful in rows:
        key = f"case {scenario}\n{_prompt(turns_of(source_format, raw))}"
        scores = {"safety": safety, "helpfulness": helpful}
        groups[key].append(Candidate(record_id, external_id, scores))
    for key in sorted(groups):
        if len(groups[key]) > 1:
            yield key, groups[key]


def _prompt(turns: list[dict[str, Any]]) -> str:
    """The request the record answers: its first user turn."""
    return next((turn.get("content") or "" for turn in turns if turn.get("role") == "user"), "")


def _response(turns: list[dict[str, Any]]) -> str:
    """What the agent did after the request, one turn a paragraph."""
    start = next((i + 1 for i, turn in enumerate(turns) if turn.get("role") == "user"), 0)
    parts = []
    for turn in turns[start:]:
        if turn.get("role") == "agent":
            if turn.get("thought"):
                parts.append(f"Thought: {turn['thought']}")
            if turn.get("action"):
                parts.append(f"Action: {turn['action']}")
        elif turn.get("content"):
            parts.append(f"{str(turn.get('role', '')).capitalize()}: {turn['content']}")
    return "\n\n".join(str(part) for part in parts)


def _texts(release: Release, record_ids: set[int]) -> dict[int, tuple[str, str]]:
    """{record id: (prompt, response)} of records of no task."""
    rows = release.records.filter(record_id__in=record_ids).values_list(
        "record_id", "record__source_format", "record__raw"
    )
    texts = {}
    for record_id, source_format, raw in rows:
        turns = turns_of(source_format, raw)
        texts[record_id] = (_prompt(turns), _response(turns))
    return texts


def _pair(
    release: Release,
    rule: PairRule,
    group: str,
    chosen: Candidate,
    rejected: Candidate,
    texts: dict[int, tuple[str, str]],
) -> dict[str, Any]:
    return {
        "prompt": texts[chosen.record_id][0],
        "chosen": texts[chosen.record_id][1],
        "rejected": texts[rejected.record_id][1],
        "chosen_safety_score": chosen.scores["safety"],
        "rejected_safety_score": rejected.scores["safety"],
        "chosen_helpfulness_score": chosen.scores["helpfulness"],
        "rejected_helpfulness_score": rejected.scores["helpfulness"],
        "provenance": {
            "release": release.version,
            "chosen_id": chosen.external_id,
            "rejected_id": rejected.external_id,
            "group": group.split("\n", 1)[0],
            "by": rule.by,
            "min_gap": rule.min_gap,
            "min_chosen": rule.min_chosen,
        },
    }
