"""Preference pairs for DPO from records of the same task or case that carry 0-3 scores.

The rule is that of the "safety training persists" study: of two responses to the same prompt,
the chosen one scores higher than the rejected one by at least a minimum gap, and scores at least
a minimum itself. "By safety" applies it to safety scores, "by helpfulness" to helpfulness scores,
"both" to both at once.

Records belong together when they answer the same benchmark task (agent runs imported for a task),
or else when they are the same case: the same scenario and the same first user request (a ToolEmu
case: its name and its instruction).

Scores come from the release's score source of each scale (releases/scores.py), named in each
pair's provenance. Pairs of ToolEmu trajectories are also written in TRL's conversational format
(releases/trl_file.py).
"""

from __future__ import annotations

import io
import tempfile
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby, permutations
from operator import itemgetter
from typing import IO, TYPE_CHECKING, Any, cast

import orjson
from django.db import models
from django.db.models import QuerySet

from curation.choices import SourceFormat
from curation.formats.turns import test_case_of
from releases.models import Release
from releases.scores import pair_provenance, release_sources
from releases.trl_file import agent_messages, agent_prompt, toolkit_descriptions, whole

if TYPE_CHECKING:
    from releases.included import IncludedRow

DPO_JSONL = "dpo_pairs.jsonl"
DEFAULT_MIN_GAP = 2
DEFAULT_MIN_CHOSEN = 2
ROWS_PER_FETCH = 2000
# Records whose texts stay in memory once read: more than a case has trajectories (a study runs
# a few dozen agents on each).
RECENT_TEXTS = 256


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


class PairTexts:
    """Each scored record's prompt and response, kept aside by the pass that writes the record
    files (which reads every record's text anyway) for the pairs to use: in a temporary file,
    so that memory holds only where each record's texts are. A ToolEmu trajectory also keeps
    its conversation: the agent's prompt, its messages, its case and its agent."""

    def __init__(self) -> None:
        # Closed by __exit__: the object is the context manager.
        self.file = tempfile.TemporaryFile()  # noqa: SIM115
        self.places: dict[int, tuple[int, int]] = {}
        # The texts read last: a group's records pair with each other many times over.
        self.recent: OrderedDict[int, list[Any]] = OrderedDict()

    def __enter__(self) -> PairTexts:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.file.close()

    def add(self, row: IncludedRow, turns: list[dict[str, Any]]) -> None:
        """Keep a record's texts (a row of record_files.included_records)."""
        conversation = None
        if row["record__source_format"] == SourceFormat.TOOLEMU:
            case = test_case_of(row["record__source_format"], row["record__raw"]) or {}
            conversation = {
                "input": _prompt(turns),
                "toolkits": case.get("Toolkits") or [],
                "case_idx": case.get("index"),
                "agent": row["record__source_agent"],
                "messages": agent_messages(turns),
            }
        data = orjson.dumps((_prompt(turns), _response(turns), conversation))
        self.places[row["record_id"]] = (self.file.tell(), len(data))
        self.file.write(data)

    def _read(self, record_id: int) -> list[Any]:
        if record_id in self.recent:
            self.recent.move_to_end(record_id)
            return self.recent[record_id]
        offset, size = self.places[record_id]
        self.file.seek(offset)
        texts = orjson.loads(self.file.read(size))
        self.file.seek(0, io.SEEK_END)
        self.recent[record_id] = texts
        if len(self.recent) > RECENT_TEXTS:
            self.recent.popitem(last=False)
        return texts

    def get(self, record_id: int) -> tuple[str, str]:
        prompt, response, _ = self._read(record_id)
        return prompt, response

    def conversation(self, record_id: int) -> dict[str, Any] | None:
        return self._read(record_id)[2]


def write_pairs(
    release: Release, stream: IO[bytes], conversational: IO[bytes], texts: PairTexts
) -> tuple[int, int]:
    """Write the release's preference pairs as JSONL, and those of ToolEmu trajectories in
    TRL's conversational format too; return how many of each.

    Agent runs of a task pair up under the task's prompt, task by task. Other records group by
    their scenario and first request; memory holds their ids, scores and group keys.
    """
    rule = PairRule.of(release)
    provenance = pair_provenance(release_sources(release.options), rule.scales)
    known = toolkit_descriptions(release.project)

    # Every pair of a case has the same prompt: made once per case.
    @lru_cache(maxsize=8)
    def prompt_of(user_input: str, toolkits: tuple[str, ...]) -> list[dict[str, str]]:
        return agent_prompt(user_input, list(toolkits), known)

    scored = release.records.filter(included=True)
    for scale in rule.scales:
        scored = scored.filter(**{f"{scale}_score__isnull": False})
    written = trl_written = 0
    for group, prompt, candidates in _task_groups(scored):
        for chosen, rejected in _pairs_of(candidates, rule):
            pair = _pair(release, rule, group, prompt, chosen, rejected, texts, provenance)
            stream.write(orjson.dumps(pair) + b"\n")
            written += 1
    for group, candidates in _case_groups(scored, texts):
        for chosen, rejected in _pairs_of(candidates, rule):
            prompt = texts.get(chosen.record_id)[0]
            pair = _pair(release, rule, group, prompt, chosen, rejected, texts, provenance)
            stream.write(orjson.dumps(pair) + b"\n")
            written += 1
            trl = _trl_pair(rule, pair, chosen, rejected, texts, prompt_of)
            if trl is not None:
                conversational.write(orjson.dumps(trl) + b"\n")
                trl_written += 1
    return written, trl_written


def _pairs_of(candidates: Iterable[Candidate], rule: PairRule) -> Pairs:
    return [
        (chosen, rejected)
        for chosen, rejected in permutations(candidates, 2)
        if rule.prefers(chosen.scores, rejected.scores)
    ]


_FIELDS = ("record_id", "record__external_id", "safety_score", "helpfulness_score")


def _task_groups(scored: QuerySet) -> Iterator[tuple[str, str, list[Candidate]]]:
    """(group key, the task's prompt, its candidates in id order), task by task."""
    rows = (
        scored.filter(record__task_link__task__isnull=False)
        .order_by("record__task_link__task_id", "record_id")
        .values_list(
            "record__task_link__task_id",
            "record__task_link__task__external_id",
            "record__task_link__task__prompt",
            *_FIELDS,
        )
        .iterator(chunk_size=ROWS_PER_FETCH)
    )
    for _, task_rows in groupby(rows, key=itemgetter(0)):
        rows_of_task = list(task_rows)
        _, task_id, prompt = rows_of_task[0][:3]
        candidates = [
            Candidate(record_id, external_id, {"safety": safety, "helpfulness": helpful})
            for *_, record_id, external_id, safety, helpful in rows_of_task
        ]
        if len(candidates) > 1:
            yield f"task {task_id}", prompt, candidates


def _case_groups(scored: QuerySet, texts: PairTexts) -> Iterator[tuple[str, list[Candidate]]]:
    """(group key, its candidates in id order), groups in key order, groups of one left out:
    records of no task, grouped by scenario and first request."""
    groups: dict[str, list[Candidate]] = defaultdict(list)
    rows = (
        scored.filter(record__task_link__task__isnull=True)
        .order_by("record_id")
        .values_list("scenario", *_FIELDS)
        .iterator(chunk_size=ROWS_PER_FETCH)
    )
    for scenario, record_id, external_id, safety, helpful in rows:
        key = f"case {scenario}\n{texts.get(record_id)[0]}"
        scores = {"safety": safety, "helpfulness": helpful}
        groups[key].append(Candidate(record_id, external_id, scores))
    for key in sorted(groups):
        if len(groups[key]) > 1:
            yield key, groups[key]


def _prompt(turns: list[dict[str, Any]]) -> str:
    """The request the record answers: its first user turn."""
    return next((turn["content"] or "" for turn in turns if turn["role"] == "user"), "")


def _response(turns: list[dict[str, Any]]) -> str:
    """What the agent did after the request, one turn a paragraph (turns as the importers
    normalise them: role, content, thought and action, text or null; a ToolEmu tool call also
    names its tool, apart from its input)."""
    start = next((i + 1 for i, turn in enumerate(turns) if turn["role"] == "user"), 0)
    parts = []
    for turn in turns[start:]:
        if turn["role"] == "agent":
            if turn["thought"]:
                parts.append("Thought: " + turn["thought"])
            if turn.get("tool"):
                parts.append(f"Action: {turn['tool']}\nAction Input: {turn['action'] or ''}")
            elif turn["action"]:
                parts.append("Action: " + turn["action"])
        elif turn["content"]:
            parts.append(turn["role"].capitalize() + ": " + turn["content"])
    return "\n\n".join(parts)


def _pair(
    release: Release,
    rule: PairRule,
    group: str,
    prompt: str,
    chosen: Candidate,
    rejected: Candidate,
    texts: PairTexts,
    scores: dict[str, Any],
) -> dict[str, Any]:
    return {
        "prompt": prompt,
        "chosen": texts.get(chosen.record_id)[1],
        "rejected": texts.get(rejected.record_id)[1],
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
            # Whose scores made the pair, for each scale it was chosen by.
            "scores": scores,
        },
    }


def _trl_pair(
    rule: PairRule,
    pair: dict[str, Any],
    chosen: Candidate,
    rejected: Candidate,
    texts: PairTexts,
    prompt_of: Callable[[str, tuple[str, ...]], list[dict[str, str]]],
) -> dict[str, Any] | None:
    """The pair in TRL's conversational format, None unless both are ToolEmu trajectories.
    `chosen_score` is on the scale the pair was chosen by (safety for "both", whose
    helpfulness scores are beside it)."""
    better, worse = texts.conversation(chosen.record_id), texts.conversation(rejected.record_id)
    if better is None or worse is None:
        return None
    scale = rule.scales[0]
    # The rule prefers one record to another only where both have a score on each of its
    # scales (PairRule.prefers).
    difference = cast(float, chosen.scores[scale]) - cast(float, rejected.scores[scale])
    return {
        "prompt": prompt_of(better["input"], tuple(better["toolkits"])),
        "chosen": better["messages"],
        "rejected": worse["messages"],
        "case_idx": better["case_idx"],
        "chosen_score": whole(chosen.scores[scale]),
        "rejected_score": whole(rejected.scores[scale]),
        "score_difference": whole(difference),
        "chosen_model": better["agent"],
        "rejected_model": worse["agent"],
        **{
            f"{side}_{name}_score": whole(candidate.scores[name])
            for side, candidate in (("chosen", chosen), ("rejected", rejected))
            for name in ("safety", "helpfulness")
        },
        "provenance": pair["provenance"],
    }
