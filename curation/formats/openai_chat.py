"""OpenAI-style chat transcripts, as agent frameworks and gateways log them: the only code that
knows their shape.

A file is JSONL, one transcript a line: `{"id"?, "messages": [...], "model"?, ...}`, where a
message is `{"role": "system" | "developer" | "user" | "assistant" | "tool", "content"}`, an
assistant's may hold `tool_calls` (`[{"id", "type": "function", "function": {"name",
"arguments"}}]`) and a tool's answers one of them by `tool_call_id`. Content is text or a list of
parts (`{"type": "text", "text"}`; other parts show as their type). Keys other than `id` and
`messages` are kept in the metadata; `model` also names the record's source agent.

The line is the one copy kept: the turns are read back from it when shown.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from curation.choices import SourceFormat
from curation.formats.chat import Message, ToolCall, Turn, chat_turns
from curation.formats.rjudge import EXTERNAL_ID_MAX_LENGTH, InvalidRecord, NormalisedRecord
from curation.formats.toolemu import SOURCE_MAX_LENGTH

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_READ_FIELDS = frozenset({"id", "messages"})

Problems = list[tuple[str, str]]


def is_chat_line(line: object) -> bool:
    """Whether a parsed JSONL line is a chat transcript rather than an R-Judge record."""
    return isinstance(line, dict) and "messages" in line and "contents" not in line


def read_chat(line: object, *, raw: str) -> NormalisedRecord:
    """A transcript checked and normalised; InvalidRecord names every field that is wrong."""
    if not isinstance(line, dict):
        raise InvalidRecord([("", "a transcript must be a JSON object with messages")])
    problems: Problems = []
    messages = _messages(line.get("messages"), problems)
    model = line.get("model")
    if model is not None and not isinstance(model, str):
        problems.append(("model", "must be the model's name, as text"))
    elif model is not None and len(model) > SOURCE_MAX_LENGTH:
        problems.append(("model", f"is longer than {SOURCE_MAX_LENGTH} characters"))
    if "\\u0000" in raw or "\x00" in raw:
        problems.append(("", "contains a NUL character (\\u0000), which cannot be stored"))
    canonical = orjson.dumps(
        {key: value for key, value in line.items() if key != "id"}, option=orjson.OPT_SORT_KEYS
    )
    digest = hashlib.sha256(canonical).hexdigest()
    external_id = _external_id(line.get("id"), digest, problems)
    if problems:
        raise InvalidRecord(problems)
    turns, profile = chat_turns(messages)
    return NormalisedRecord(
        external_id=external_id,
        category="",
        scenario="",
        profile=profile,
        goal="",
        turns=turns,
        attack_type="",
        gold_label="",
        gold_risk_description="",
        content_hash=digest,
        raw=raw,
        metadata={key: value for key, value in line.items() if key not in _READ_FIELDS},
        source_format=SourceFormat.OPENAI_CHAT,
        source_agent=(model or "").strip(),
    )


def chat_record_turns(raw: str) -> list[Turn]:
    """The turns of a stored transcript (checked when it was imported)."""
    turns, _ = chat_turns(_messages(orjson.loads(raw).get("messages"), []))
    return turns


def _external_id(value: object, digest: str, problems: Problems) -> str:
    if value is None:
        # Transcripts without an id are known by their content.
        return digest
    if isinstance(value, bool) or not isinstance(value, int | str):
        problems.append(("id", "must be a whole number or text"))
        return digest
    external_id = str(value)
    if not external_id.strip():
        problems.append(("id", "is empty"))
    elif len(external_id) > EXTERNAL_ID_MAX_LENGTH:
        problems.append(("id", f"is longer than {EXTERNAL_ID_MAX_LENGTH} characters"))
    return external_id


def _messages(value: object, problems: Problems) -> list[Message]:
    if not isinstance(value, list) or not value:
        problems.append(("messages", "must be a list of messages, not empty"))
        return []
    messages = []
    # The tool calls made so far, by id: a tool message answers one of them.
    calls: dict[str, str] = {}
    for index, item in enumerate(value):
        where = f"messages[{index}]"
        if not isinstance(item, dict):
            problems.append((where, "must be a message, a JSON object with a role"))
            continue
        role = item.get("role")
        if role not in ROLES:
            problems.append((f"{where}.role", f"must be one of {', '.join(ROLES)}"))
            continue
        text = _content(item.get("content"), f"{where}.content", problems)
        if role == "assistant":
            tool_calls = _tool_calls(item, where, problems)
            calls.update((call_id, call.function) for call_id, call in tool_calls)
            reasoning = item.get("reasoning_content", item.get("reasoning"))
            messages.append(
                Message(
                    "assistant",
                    text=text,
                    reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
                    tool_calls=[call for _, call in tool_calls],
                )
            )
        elif role in ("tool", "function"):
            function = _answered(item, where, calls, problems)
            messages.append(Message("tool", text=text, function=function))
        else:
            messages.append(Message(role, text=text))
    return messages


def _content(value: object, where: str, problems: Problems) -> str | None:
    """Text content as it is, a list of parts as their texts (other parts by their type)."""
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, list):
        problems.append((where, "must be text, a list of content parts or null"))
        return None
    texts = []
    for index, part in enumerate(value):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            problems.append((f"{where}[{index}]", "must be a content part with a type"))
            continue
        text = part.get("text", part.get("refusal"))
        if part["type"] in ("text", "refusal"):
            if not isinstance(text, str):
                problems.append((f"{where}[{index}].text", "must be text"))
                continue
            texts.append(text)
        else:
            texts.append(f"[{part['type']}]")
    return "\n".join(texts)


def _tool_calls(
    message: dict[str, Any], where: str, problems: Problems
) -> list[tuple[str, ToolCall]]:
    """The assistant's tool calls with their ids (a legacy `function_call` has none)."""
    value = message.get("tool_calls")
    legacy = message.get("function_call")
    if value is None:
        value = [] if legacy is None else [{"id": "", "function": legacy}]
        where_calls = f"{where}.function_call"
    else:
        where_calls = f"{where}.tool_calls"
    if not isinstance(value, list):
        problems.append((where_calls, "must be a list of tool calls"))
        return []
    calls = []
    for index, call in enumerate(value):
        at = f"{where_calls}[{index}]" if message.get("tool_calls") is not None else where_calls
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            problems.append((f"{at}.function", "must be the function called, an object"))
            continue
        name = function.get("name")
        if not isinstance(name, str) or not name.strip():
            problems.append((f"{at}.function.name", "must be the function's name, as text"))
            continue
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str | dict):
            problems.append((f"{at}.function.arguments", "must be JSON text or an object"))
            continue
        call_id = call.get("id") or ""
        if not isinstance(call_id, str):
            problems.append((f"{at}.id", "must be text"))
            continue
        calls.append((call_id, ToolCall(name, "" if arguments is None else arguments)))
    return calls


def _answered(
    message: dict[str, Any], where: str, calls: dict[str, str], problems: Problems
) -> str | None:
    """The function a tool message answers: named, or found by the call's id."""
    name = message.get("name")
    call_id = message.get("tool_call_id")
    if message["role"] == "function" and call_id is None:
        return name if isinstance(name, str) else None
    if not isinstance(call_id, str) or not call_id:
        problems.append((f"{where}.tool_call_id", "must be the id of the tool call it answers"))
        return None
    if call_id not in calls:
        problems.append(
            (f"{where}.tool_call_id", "answers no tool call of an earlier assistant message")
        )
        return None
    return name if isinstance(name, str) and name else calls[call_id]
