"""ToolEmu trajectories as studies built on ToolEmu publish them: the only code that knows them.

A study writes `<evaluator>/<agent>/<agent>_emu-<emulator>_eval-<evaluator>_r<a>-<b>_<stamp>.jsonl`,
one trajectory a line: `input` (the user instruction), `output` (the final answer), `case` (the
whole test case), `case_idx`, and `intermediate_steps`, one `[[tool, tool_input, agent_log],
[observation, emulator_summary, emulator_thought]]` per tool call, the last
`[{"return_values": {"output"}, "log", "type": "AgentFinish"}, ""]`. Beside it, files ending
`_eval_agent_safe.jsonl` and `_eval_agent_help_ignore_safety.jsonl` hold the evaluators' scores,
line n scoring trajectory line n.

The line is the one copy kept: turns and the test case are read back from it when shown.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import orjson

from curation.choices import SourceFormat
from curation.formats.rjudge import (
    EXTERNAL_ID_MAX_LENGTH,
    TEXT_FIELDS,
    InvalidRecord,
    NormalisedRecord,
)

# The evaluator files beside a trajectory file, by the metric they score.
EVALUATOR_SUFFIXES = {
    "safe": "_eval_agent_safe.jsonl",
    "help_ignore_safety": "_eval_agent_help_ignore_safety.jsonl",
}
_FILE_NAME = re.compile(
    r"(?P<agent>.+?)_emu-(?P<emulator>.+?)_eval-(?P<evaluator>.+?)"
    r"_r(?P<first>\d+)-(?P<end>\d+)_(?P<stamp>.+)\.jsonl"
)
# The test case's fields shown beside the trace, in ToolEmu's order.
CASE_FIELDS = (
    "Toolkits",
    "User Instruction",
    "Underspecifications",
    "Expected Achievements",
    "Potential Risky Outcomes",
    "Potential Risky Actions",
)
# Fields read into turns or the test case; the others are kept in the metadata.
_READ_FIELDS = frozenset(
    {
        "input",
        "output",
        "intermediate_steps",
        "case",
        "case_idx",
        "underspecifications",
        "risky_outcome",
        "risky_actions",
    }
)
_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL)
# The longest agent, emulator, case and replicate a record's source columns hold.
SOURCE_MAX_LENGTH = 200
CATEGORY = "ToolEmu"

Turn = dict[str, Any]


@dataclass(frozen=True)
class TrajectoryFile:
    """What a trajectory file's name says: who acted, who emulated, who evaluated, which run."""

    agent: str
    emulator: str
    evaluator: str
    first_case: int
    end_case: int
    stamp: str

    @property
    def replicate(self) -> str:
        return f"r{self.first_case}-{self.end_case}_{self.stamp}"


def trajectory_file(path: str) -> TrajectoryFile | None:
    """The trajectory file named by `path`, None for any other file (evaluator files too)."""
    name = PurePosixPath(path).name
    if evaluator_file(path) is not None:
        return None
    match = _FILE_NAME.fullmatch(name)
    if match is None:
        return None
    return TrajectoryFile(
        agent=match["agent"],
        emulator=match["emulator"],
        evaluator=match["evaluator"],
        first_case=int(match["first"]),
        end_case=int(match["end"]),
        stamp=match["stamp"],
    )


def evaluator_file(path: str) -> tuple[str, str] | None:
    """(metric, the path of the trajectory file it scores) for an evaluator file, else None."""
    for metric, suffix in EVALUATOR_SUFFIXES.items():
        if path.endswith(suffix) and _FILE_NAME.fullmatch(
            PurePosixPath(path).name.removesuffix(suffix) + ".jsonl"
        ):
            return metric, path.removesuffix(suffix) + ".jsonl"
    return None


def read_trajectory(line: object, *, raw: str, file: TrajectoryFile) -> NormalisedRecord:
    """A trajectory checked and normalised; InvalidRecord names every field that is wrong."""
    if not isinstance(line, dict):
        raise InvalidRecord([("", "a trajectory must be a JSON object")])
    problems: list[tuple[str, str]] = []
    if not isinstance(line.get("input"), str):
        problems.append(("input", "must be the user instruction, as text"))
    if line.get("output") is not None and not isinstance(line["output"], str):
        problems.append(("output", "must be text or null"))
    case_idx = line.get("case_idx")
    if isinstance(case_idx, bool) or not isinstance(case_idx, int) or case_idx < 0:
        problems.append(("case_idx", "must be the case's index, a whole number from 0"))
    case = _case(line, problems)
    if "\\u0000" in raw or "\x00" in raw:
        problems.append(("", "contains a NUL character (\\u0000), which cannot be stored"))
    turns = _turns(line, problems)
    if problems:
        raise InvalidRecord(problems)
    category = next((name for name in case.get("Toolkits") or [] if name.strip()), CATEGORY)
    too_long = [
        (field, f"{what} is longer than {limit} characters")
        for field, what, value, limit in (
            ("case.Toolkits", "the first toolkit", category, TEXT_FIELDS["category"] or 0),
            ("", "the agent in the file name", file.agent, SOURCE_MAX_LENGTH),
            ("", "the emulator in the file name", file.emulator, SOURCE_MAX_LENGTH),
            ("", "the run in the file name", file.replicate, SOURCE_MAX_LENGTH),
        )
        if len(value) > limit
    ]
    if too_long:
        raise InvalidRecord(too_long)
    digest = hashlib.sha256(orjson.dumps(line, option=orjson.OPT_SORT_KEYS)).hexdigest()
    external_id = trajectory_id(
        agent=file.agent, case=case["name"], emulator=file.emulator, replicate=file.replicate
    )
    if len(external_id) > EXTERNAL_ID_MAX_LENGTH:
        message = "the agent's, case's, emulator's and run's names are too long for an id"
        raise InvalidRecord([("", message)])
    return NormalisedRecord(
        external_id=external_id,
        category=category,
        scenario=case["name"],
        profile="",
        goal="",
        turns=turns,
        attack_type="",
        gold_label="",
        gold_risk_description="",
        content_hash=digest,
        raw=raw,
        metadata={key: value for key, value in line.items() if key not in _READ_FIELDS},
        source_format=SourceFormat.TOOLEMU,
        source_agent=file.agent,
        source_emulator=file.emulator,
        source_case=case["name"],
        source_case_index=case_idx,
        source_replicate=file.replicate,
    )


def trajectory_id(*, agent: str, case: str, emulator: str, replicate: str) -> str:
    """A trajectory's id: what the study identifies it by, never its content, so that a corrected
    trajectory is a change to its record rather than a second record. The same trajectory
    comes under each evaluator's folder, under this one id."""
    return f"{agent}/{case}/{emulator}/{replicate}"


# ToolEmu's own files beside a study's: its toolkits (read for their tools' descriptions) and
# its test cases (which every trajectory carries whole already, so they add nothing).
TOOLKITS_FILE = "all_toolkits.json"
CASES_FILE = "all_cases.json"
TOOLKIT_NAME_MAX_LENGTH = 100


@dataclass(frozen=True)
class ToolkitSpec:
    name: str
    description: str
    # Each tool's summary by the name agents call it: the toolkit's name, then the tool's.
    tools: dict[str, str]


def read_toolkits(data: object) -> list[ToolkitSpec]:
    """The toolkits of an `all_toolkits.json`; InvalidRecord names every field that is wrong."""
    if not isinstance(data, list):
        raise InvalidRecord([("", "must be a list of toolkits")])
    problems: list[tuple[str, str]] = []
    toolkits = []
    for index, toolkit in enumerate(data):
        where = f"[{index}]"
        if not isinstance(toolkit, dict):
            problems.append((where, "must be a toolkit, an object"))
            continue
        name = toolkit.get("name_for_model", toolkit.get("toolkit"))
        if not isinstance(name, str) or not name.strip():
            problems.append((f"{where}.name_for_model", "must be the toolkit's name, as text"))
            continue
        if len(name) > TOOLKIT_NAME_MAX_LENGTH:
            message = f"is longer than {TOOLKIT_NAME_MAX_LENGTH} characters"
            problems.append((f"{where}.name_for_model", message))
            continue
        tools = {}
        for position, tool in enumerate(toolkit.get("tools") or []):
            if not (isinstance(tool, dict) and isinstance(tool.get("name"), str)):
                problems.append((f"{where}.tools[{position}]", "must be a tool with a name"))
                continue
            summary = tool.get("summary")
            tools[f"{name}{tool['name']}"] = summary if isinstance(summary, str) else ""
        description = toolkit.get("description_for_model")
        description = description if isinstance(description, str) else ""
        toolkits.append(ToolkitSpec(name, description, tools))
    if problems:
        raise InvalidRecord(problems)
    return toolkits


# An evaluator's fields, as ToolEmu writes them.
EVALUATION_FIELDS = (
    "Evaluator Thought",
    "Overall Qualitative Label",
    "Overall Quantitative Score",
    "Evaluator Log Summary",
)


@dataclass(frozen=True)
class Evaluation:
    """One line of an evaluator file, checked for shape; what its label means is the judging
    app's to read (labels are noisy: `**Possible Mild Risk (2)**`, prose, null)."""

    fields: dict[str, Any]
    # `eval_scores`, read from its Python-literal text: `{'ToolCallRisk': 2}`.
    scores: dict[str, Any]
    raw: str


def read_evaluation(line: object, *, raw: str) -> Evaluation:
    """An evaluator's line; InvalidRecord names every field that is wrong."""
    if not isinstance(line, dict):
        raise InvalidRecord([("", "an evaluation must be a JSON object")])
    problems: list[tuple[str, str]] = []
    for name in EVALUATION_FIELDS:
        value = line.get(name)
        if value is not None and not isinstance(value, str | int | float):
            problems.append((name, "must be text, a number or null"))
    scores = _eval_scores(line.get("eval_scores"), problems)
    if problems:
        raise InvalidRecord(problems)
    fields = {name: line.get(name) for name in EVALUATION_FIELDS}
    return Evaluation(fields=fields, scores=scores, raw=raw)


def _eval_scores(value: object, problems: list[tuple[str, str]]) -> dict[str, Any]:
    if value is None or isinstance(value, dict):
        return value or {}
    if not isinstance(value, str):
        problems.append(("eval_scores", "must be a dict, written as text or as an object"))
        return {}
    try:
        # A literal, never code: the text comes from the file.
        scores = ast.literal_eval(value) if value.strip() else {}
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        scores = None
    if not isinstance(scores, dict):
        problems.append(("eval_scores", f"is not a dict literal: {value[:60]!r}"))
        return {}
    return scores


def trajectory_turns(raw: str) -> list[Turn]:
    """The turns of a stored trajectory (checked when it was imported)."""
    return _turns(orjson.loads(raw), [])


def trajectory_case(raw: str) -> dict[str, Any]:
    """The test case of a stored trajectory: its name, index and the fields of CASE_FIELDS."""
    line = orjson.loads(raw)
    case = line.get("case") or {}
    return {
        "name": case.get("name", ""),
        "index": line.get("case_idx"),
        **{field: case[field] for field in CASE_FIELDS if field in case},
    }


def split_thinking(text: str) -> tuple[str, str]:
    """(the text without its `<think>` blocks, what the blocks held): reasoning models write
    long deliberations there, which a reader opens only when the rest does not explain enough."""
    thinking = "\n\n".join(block.strip() for block in _THINK.findall(text) if block.strip())
    return _THINK.sub("", text).strip(), thinking


def _case(line: dict[str, Any], problems: list[tuple[str, str]]) -> dict[str, Any]:
    """The trajectory's test case; an empty one when it is no object, the problem noted."""
    case = line.get("case")
    if not isinstance(case, dict):
        problems.append(("case", "must be the test case, an object"))
        return {}
    if not isinstance(case.get("name"), str) or not case["name"].strip():
        problems.append(("case.name", "must be the case's name, as text"))
    elif len(case["name"]) > (TEXT_FIELDS["scenario"] or 0):
        problems.append(("case.name", f"is longer than {TEXT_FIELDS['scenario']} characters"))
    elif not _is_text_list(case.get("Toolkits", [])):
        problems.append(("case.Toolkits", "must be a list of toolkit names"))
    return case


def _turns(line: dict[str, Any], problems: list[tuple[str, str]]) -> list[Turn]:
    turns: list[Turn] = [_turn("user", content=line.get("input"))]
    steps = line.get("intermediate_steps")
    if not isinstance(steps, list):
        problems.append(("intermediate_steps", "must be a list of steps"))
        return turns
    finished = False
    for index, step in enumerate(steps):
        where = f"intermediate_steps[{index}]"
        if not isinstance(step, list) or not step:
            problems.append((where, "must be [action, observation]"))
            continue
        action = step[0]
        if isinstance(action, dict):
            if action.get("type") != "AgentFinish":
                problems.append((f"{where}[0].type", "must be AgentFinish"))
                continue
            values = action.get("return_values")
            output = values.get("output") if isinstance(values, dict) else None
            if not _is_text(output) or not _is_text(action.get("log")):
                problems.append((f"{where}[0]", "must hold return_values.output and log as text"))
                continue
            turns.append(_turn("agent", content=output, thought=action.get("log")))
            finished = True
            continue
        if not (isinstance(action, list) and len(action) == 3 and _is_text_list(action)):
            problems.append((f"{where}[0]", "must be [tool, tool_input, log], as text"))
            continue
        tool, tool_input, log = action
        turns.append({**_turn("agent", thought=log, action=tool_input), "tool": tool})
        observation = step[1] if len(step) > 1 else ""
        if isinstance(observation, str):
            observation = [observation]
        if not (isinstance(observation, list) and _is_text_list(observation)):
            problems.append((f"{where}[1]", "must be [observation, summary, thought], as text"))
            continue
        notes = dict(zip(("summary", "thought"), observation[1:3], strict=False))
        turns.append({**_turn("environment", content=observation[0]), "notes": notes})
    if not finished and line.get("output"):
        turns.append(_turn("agent", content=line["output"]))
    return turns


def _turn(
    role: str, *, content: str | None = None, thought: str | None = None, action: str | None = None
) -> Turn:
    # One round: a trajectory answers one user instruction.
    return {"round": 0, "role": role, "content": content, "thought": thought, "action": action}


def _is_text(value: object) -> bool:
    return value is None or isinstance(value, str)


def _is_text_list(values: object) -> bool:
    return isinstance(values, list) and all(isinstance(value, str) for value in values)
