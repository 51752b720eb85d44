"""The files that take a release back into the field's pipeline: an Inspect evaluation of a
model as a safety judge, supervised examples to train judges, and a ToolEmu study's cases as an
Inspect dataset. Written in the record files' one pass (record_files.write_record_files), for
releases of the layout that has them (Release.layout).

- `judge_task.py` and `judge_dataset.jsonl`: `inspect eval judge_task.py --model <model>`. Each
  sample's input is the record as the studio's R-Judge judges send it (judging.protocols.rjudge:
  the same conversation, fence and request for an analysis), its target the release's label; the
  task file (releases/inspect_task/judge_task.py, copied as it is) asks for the label and scores
  the answer by R-Judge's rule, with R-Judge's metrics.
- `judge_sft.jsonl`: TRL's conversational format (`{"messages": [...]}`), R-Judge's two steps as
  a conversation to learn: the record, then its risk description as the analysis, then the
  question and the label. The record is quoted in one user message, as R-Judge writes turns,
  rather than replayed: replayed, the agent's own (possibly unsafe) actions would be assistant
  messages, which trainers teach. `judge_sft_openai.jsonl` holds the same conversations in the
  same order, with `messages` alone: OpenAI's fine-tuning refuses an example with other keys.
- `toolemu_cases.jsonl`: each ToolEmu test case of the release once, as an Inspect sample (the
  user instruction as input, the expected achievements as target), its toolkits described with
  their tools from the project's all_toolkits.json.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path
from typing import Any, Self

import orjson

from curation.formats.turns import test_case_of
from curation.models import Project
from judging.protocols.base import Case
from judging.protocols.fencing import Fence, interaction_text
from judging.protocols.rjudge import ANALYSE, DECIDE, conversation
from releases.freeze import ADJUDICATED
from releases.included import IncludedRow
from releases.trl_file import toolkit_descriptions

JUDGE_TASK = "judge_task.py"
JUDGE_DATASET = "judge_dataset.jsonl"
JUDGE_SFT = "judge_sft.jsonl"
JUDGE_SFT_OPENAI = "judge_sft_openai.jsonl"
TOOLEMU_CASES = "toolemu_cases.jsonl"
# The first layout of releases with these files (releases.models.CURRENT_LAYOUT).
PIPELINE_LAYOUT = 2
TASK_SOURCE = Path(__file__).resolve().parent / "inspect_task" / JUDGE_TASK

# The analysis of a record whose label came without a risk description (a safe consensus keeps
# none): a sentence saying the label, so that every labelled record teaches both steps.
UNDESCRIBED = {
    "safe": "The agent's actions in this scenario are safe: they cause no risk.",
    "unsafe": "The agent's actions in this scenario are unsafe.",
}
# The ToolEmu case's fields that an Inspect sample keeps as metadata, under ToolEmu's names.
CASE_METADATA = (
    "Underspecifications",
    "Expected Achievements",
    "Potential Risky Outcomes",
    "Potential Risky Actions",
)


def fence_tokens(seed: str) -> Callable[[], str]:
    """Fence tokens drawn from the record's id rather than at random, so that the same release
    builds into the same bytes. Nothing is lost: the record was written before its token was
    drawn, and Fence.around still takes a token none of its text holds."""
    numbers: Iterator[int] = count()

    def token() -> str:
        return hashlib.sha256(f"{seed}:{next(numbers)}".encode()).hexdigest()[:16]

    return token


def judge_sample(row: IncludedRow, turns: list[dict[str, Any]]) -> dict[str, Any]:
    """A labelled record as an Inspect sample: the studio's R-Judge prompt up to the analysis."""
    case = Case(
        record_id=row["record_id"],
        external_id=row["record__external_id"],
        category=row["category"],
        scenario=row["scenario"],
        profile=row["record__profile"],
        goal=row["record__goal"],
        turns=turns,
    )
    fence = Fence.around(case.texts(), fence_tokens(case.external_id))
    messages = [*conversation(case, fence), {"role": "user", "content": ANALYSE}]
    return {
        "id": case.external_id,
        "input": messages,
        "target": row["label"],
        "metadata": {
            "category": row["category"],
            "scenario": row["scenario"],
            "attack_type": row["record__attack_type"],
            "label_source": row["label_source"],
        },
    }


def training_example(row: IncludedRow, turns: list[dict[str, Any]]) -> dict[str, Any]:
    """A labelled record as a judge's lesson in R-Judge's two steps."""
    label, description = row["label"], row["risk_description"].strip()
    profile = row["record__profile"]
    messages = [{"role": "system", "content": profile}] if profile.strip() else []
    messages += [
        {"role": "user", "content": f"{interaction_text(turns)}\n\n{ANALYSE}"},
        {"role": "assistant", "content": description or UNDESCRIBED[label]},
        {"role": "user", "content": DECIDE},
        {"role": "assistant", "content": label},
    ]
    return {
        "messages": messages,
        "id": row["record__external_id"],
        # Not "label": TRL reads a "label" beside "messages" as another format's column.
        "safety_label": label,
        "label_source": row["label_source"],
        "adjudicated": row["label_source"] == ADJUDICATED,
        # False: the analysis is the sentence of UNDESCRIBED, not a person's description.
        "described": bool(description),
    }


def case_sample(case: dict[str, Any], known: dict[str, tuple[str, dict[str, str]]]) -> dict:
    """A ToolEmu test case as an Inspect sample, its toolkits described where imported."""
    toolkits = []
    for name in case.get("Toolkits", []):
        description, tools = known.get(name, (None, {}))
        toolkits.append(
            {
                "name": name,
                "description": description,
                "tools": [{"name": tool, "summary": tools[tool]} for tool in sorted(tools)],
            }
        )
    return {
        "id": case["name"],
        "input": case.get("User Instruction", ""),
        "target": case.get("Expected Achievements", []),
        "metadata": {
            "case_index": case["index"],
            "Toolkits": toolkits,
            **{field: case[field] for field in CASE_METADATA if field in case},
        },
    }


class PipelineFiles:
    """The files above, fed record by record; `names` are those written (a file with no line,
    and the task without its dataset, are left out)."""

    def __init__(self, project: Project, folder: Path) -> None:
        self.project = project
        self.folder = folder
        self.streams = {
            name: open(folder / name, "wb")  # noqa: SIM115 (closed in __exit__)
            for name in (JUDGE_DATASET, JUDGE_SFT, JUDGE_SFT_OPENAI)
        }
        self.lines = dict.fromkeys(self.streams, 0)
        # {(case index, name): case}: each case once, however many agents ran it.
        self.cases: dict[tuple[int, str], dict[str, Any]] = {}
        self.names: list[str] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        for stream in self.streams.values():
            stream.close()
        if exc_type is None:
            self._finish()

    def add(self, row: IncludedRow, turns: list[dict[str, Any]]) -> None:
        case = test_case_of(row["record__source_format"], row["record__raw"])
        if case is not None and case.get("name"):
            index = case["index"] if case["index"] is not None else -1
            self.cases.setdefault((index, case["name"]), case)
        if not row["label"]:
            # Released for its scores alone: nothing to judge or to learn.
            return
        example = training_example(row, turns)
        self._write(JUDGE_DATASET, judge_sample(row, turns))
        self._write(JUDGE_SFT, example)
        self._write(JUDGE_SFT_OPENAI, {"messages": example["messages"]})

    def _write(self, name: str, line: dict[str, Any]) -> None:
        self.streams[name].write(orjson.dumps(line) + b"\n")
        self.lines[name] += 1

    def _finish(self) -> None:
        for name, lines in self.lines.items():
            if lines:
                self.names.append(name)
            else:
                (self.folder / name).unlink()
        if self.lines[JUDGE_DATASET]:
            shutil.copyfile(TASK_SOURCE, self.folder / JUDGE_TASK)
            self.names.append(JUDGE_TASK)
        if self.cases:
            known = toolkit_descriptions(self.project)
            with open(self.folder / TOOLEMU_CASES, "wb") as stream:
                for key in sorted(self.cases):
                    stream.write(orjson.dumps(case_sample(self.cases[key], known)) + b"\n")
            self.names.append(TOOLEMU_CASES)
