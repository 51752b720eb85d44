"""SafePro agent runs: the only code that knows their shape.

A run file is JSONL, one run a line: `{instance_id, instruction, history, test_result, ...}`,
where instance_id is the task_id of the task the agent worked on and history is the agent
framework's event log. Three shapes of events are read:

- OpenHands events: actions `{"source", "action", "args", "message"}` and observations
  `{"source", "observation", "content"}`, alone or paired `[action, observation]`;
- OpenHands SDK events: `{"kind": "MessageEvent" | "ActionEvent" | "ObservationEvent", ...}`;
- chat messages: `{"role": "system" | "user" | "assistant" | "tool", "content", "tool_calls"}`.

They become the turns every record has (user, agent thought and action, environment), read from
the stored line whenever a record is shown (`turns_of`), so the line is the one copy kept.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from curation.formats.rjudge import EXTERNAL_ID_MAX_LENGTH, InvalidRecord

# Keys with a place of their own; the others (test_result, metrics, ...) go to the metadata.
RUN_KEYS = ("instance_id", "instruction", "history")
# The record's id is the instance id and the start of the line's hash: runs of several agents
# on one task are distinct records, and importing a file twice adds nothing.
HASH_CHARS = 12
INSTANCE_ID_MAX_LENGTH = EXTERNAL_ID_MAX_LENGTH - HASH_CHARS - 1
# Events that say nothing about what the agent did: state changes, empty observations.
_SILENT_ACTIONS = frozenset({"change_agent_state"})
_SILENT_OBSERVATIONS = frozenset({"agent_state_changed", "null"})
_SDK_SKIPPED = frozenset({"ConversationStateUpdateEvent", "PauseEvent", "Condensation"})

Turn = dict[str, Any]
# What an event becomes: (role, content, thought, action) of a turn, "system" for a system
# prompt, or None for one that shows nothing.
Converted = tuple[str, str | None, str | None, str | None] | Literal["system"] | None


@dataclass(frozen=True)
class AgentRun:
    instance_id: str
    external_id: str
    profile: str
    turns: list[Turn]
    metadata: dict[str, Any]
    content_hash: str
    raw: str

    @property
    def model(self) -> str:
        """The agent's model, where the run's metadata names one (OpenHands writes it in
        `metadata.llm_config.model`), else ""."""
        for holder in (self.metadata, self.metadata.get("metadata")):
            if not isinstance(holder, dict):
                continue
            config = holder.get("llm_config")
            for model in (
                holder.get("model"),
                config.get("model") if isinstance(config, dict) else None,
            ):
                if isinstance(model, str) and model.strip():
                    return model.strip()[:200]
        return ""

    @property
    def preview(self) -> str:
        first = next((turn["content"] for turn in self.turns if turn["role"] == "user"), None)
        return (first or "")[:200]


def read_run(line: str) -> AgentRun:
    """A run from one line of a run file; InvalidRecord names every field that is wrong."""
    try:
        run = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        raise InvalidRecord([("", f"is not valid JSON ({error})")]) from None
    if not isinstance(run, dict):
        raise InvalidRecord([("", "a run must be a JSON object")])
    problems: list[tuple[str, str]] = []
    instance_id = run.get("instance_id")
    if isinstance(instance_id, bool) or not isinstance(instance_id, int | str):
        problems.append(("instance_id", "must be the task_id of a task, as text"))
    elif not str(instance_id).strip():
        problems.append(("instance_id", "is empty"))
    elif len(str(instance_id)) > INSTANCE_ID_MAX_LENGTH:
        problems.append(("instance_id", f"is longer than {INSTANCE_ID_MAX_LENGTH} characters"))
    if run.get("instruction") is not None and not isinstance(run["instruction"], str):
        problems.append(("instruction", "must be text"))
    if not isinstance(run.get("history"), list):
        problems.append(("history", "must be a list of events"))
    if "\\u0000" in line or "\x00" in line:
        problems.append(("", "contains a NUL character (\\u0000), which cannot be stored"))
    if problems:
        raise InvalidRecord(problems)
    turns, profile = _history(run, problems)
    if problems:
        raise InvalidRecord(problems)
    digest = hashlib.sha256(orjson.dumps(run, option=orjson.OPT_SORT_KEYS)).hexdigest()
    instance_id = str(run["instance_id"]).strip()
    return AgentRun(
        instance_id=instance_id,
        external_id=f"{instance_id}-{digest[:HASH_CHARS]}",
        profile=profile,
        turns=turns,
        metadata={key: value for key, value in run.items() if key not in RUN_KEYS},
        content_hash=digest,
        raw=line.strip(),
    )


def run_turns(raw: str) -> list[Turn]:
    """The turns of a stored run (checked when it was imported)."""
    turns, _ = _history(orjson.loads(raw), [])
    return turns


def _history(run: dict[str, Any], problems: list[tuple[str, str]]) -> tuple[list[Turn], str]:
    """The run's turns, in rounds that each start with a user turn, and its system prompt."""
    turns: list[Turn] = []
    profile = ""
    number = 0
    events: list[tuple[str, Any]] = []
    for index, item in enumerate(run["history"]):
        if isinstance(item, list) and all(isinstance(event, dict) for event in item):
            events.extend((f"history[{index}][{j}]", event) for j, event in enumerate(item))
        else:
            events.append((f"history[{index}]", item))
    for where, event in events:
        try:
            converted = _event(event)
        except ValueError as error:
            problems.append((where, str(error)))
            continue
        if converted is None:
            continue
        if converted == "system":
            profile = profile or _system_prompt(event)
            continue
        role, content, thought, action = converted
        if role == "user" and turns and turns[-1]["role"] != "user":
            number += 1
        turns.append(
            {
                "round": number,
                "role": role,
                "content": content,
                "thought": thought,
                "action": action,
            }
        )
    if not any(turn["role"] == "user" for turn in turns) and run.get("instruction"):
        turns = [
            {
                "round": 0,
                "role": "user",
                "content": run["instruction"],
                "thought": None,
                "action": None,
            },
            *({**turn, "round": turn["round"] + 1} for turn in turns),
        ]
    return turns, profile


def _event(event: object) -> Converted:
    """(role, content, thought, action) of an event, "system" for a system prompt, None to skip.

    Raises ValueError for an event of no known shape.
    """
    if not isinstance(event, dict):
        raise ValueError("must be an event or a message (a JSON object)")
    if "role" in event:
        return _chat_message(event)
    if "kind" in event:
        return _sdk_event(event)
    if "observation" in event:
        if event["observation"] in _SILENT_OBSERVATIONS:
            return None
        return ("environment", _text(event.get("content")), None, None)
    if "action" in event:
        return _openhands_action(event)
    raise ValueError("is not an OpenHands event or a chat message")


def _chat_message(message: dict[str, Any]) -> Converted:
    role = message["role"]
    if role == "system":
        return "system"
    if role == "user":
        return ("user", _text(message.get("content")), None, None)
    if role in ("tool", "function"):
        return ("environment", _text(message.get("content")), None, None)
    if role != "assistant":
        raise ValueError(f"has an unknown role {role!r}: expected system, user, assistant or tool")
    calls = message.get("tool_calls") or []
    if not calls:
        return ("agent", _text(message.get("content")), None, None)
    actions = []
    for call in calls:
        function = call.get("function", call) if isinstance(call, dict) else {}
        actions.append(f"{function.get('name', '?')}: {_text(function.get('arguments'))}")
    return ("agent", None, _text(message.get("content")), "\n".join(actions))


def _sdk_event(event: dict[str, Any]) -> Converted:
    kind = event["kind"]
    if kind == "SystemPromptEvent":
        return "system"
    if kind == "MessageEvent":
        message = event.get("llm_message") or {}
        role = "user" if event.get("source") == "user" else "agent"
        return (role, _text(message.get("content")), None, None)
    if kind == "ActionEvent":
        action = f"{event.get('tool_name', '?')}: {_text(event.get('action'))}"
        return ("agent", None, _text(event.get("thought")) or None, action)
    if kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
        observation = event.get("observation")
        body = observation.get("content") if isinstance(observation, dict) else observation
        return ("environment", _text(body if body is not None else event.get("error")), None, None)
    if kind in _SDK_SKIPPED:
        return None
    raise ValueError(f"is an OpenHands event of an unknown kind {kind!r}")


def _openhands_action(event: dict[str, Any]) -> Converted:
    name = event["action"]
    args = _args(event)
    if name == "system":
        return "system"
    if name in _SILENT_ACTIONS:
        return None
    if event.get("source") == "user":
        return ("user", _text(args.get("content", event.get("message"))), None, None)
    thought = _text(args.get("thought")) or None
    if name == "message":
        return ("agent", _text(args.get("content", event.get("message"))), thought, None)
    if name == "think":
        return ("agent", None, thought, None)
    if name == "finish":
        return ("agent", _text(args.get("final_thought") or event.get("message")), thought, None)
    rest = {key: value for key, value in args.items() if key != "thought"}
    return ("agent", None, thought, f"{name}: {_text(rest)}")


def _system_prompt(event: dict[str, Any]) -> str:
    if "role" in event:
        return _text(event.get("content")) or ""
    if "kind" in event:
        prompt = event.get("system_prompt")
        return _text(prompt.get("text") if isinstance(prompt, dict) else prompt) or ""
    return _text(_args(event).get("content")) or ""


def _args(event: dict[str, Any]) -> dict[str, Any]:
    """An OpenHands action's arguments; none when they are no object."""
    args = event.get("args")
    return args if isinstance(args, dict) else {}


def _text(value: object) -> str | None:
    """Text as a turn shows it: strings as they are, content parts joined, the rest as JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(
        isinstance(part, dict) and isinstance(part.get("text"), str) for part in value
    ):
        return "\n".join(part["text"] for part in value)
    return json.dumps(value, ensure_ascii=False)
