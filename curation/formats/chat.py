"""Chat messages as turns: what Inspect samples and OpenAI-style transcripts have in common.

Each format reads its own messages into `Message`s; here they become the turns every record
has. System messages make the profile. A user message is a user turn, and starts a new round
after the agent has acted. An assistant message is an agent turn: its text is what it says, or
its thought when it calls tools, and each tool call is a turn of its own with the tool apart
from its arguments (the record page shows them so, as ToolEmu's). A tool message is an
environment turn, its tool and error kept as notes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

Turn = dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    function: str
    # The arguments as the model wrote them: a JSON object, or text when they were not JSON.
    arguments: object


@dataclass(frozen=True)
class Message:
    role: str
    text: str | None = None
    # A reasoning model's deliberation, shown folded as the `<think>` blocks of other formats.
    reasoning: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    # A tool message: the function that answered, and the error it raised, if any.
    function: str | None = None
    error: str | None = None


def chat_turns(messages: list[Message]) -> tuple[list[Turn], str]:
    """The messages' turns, in rounds that each start with a user turn, and the system prompt."""
    turns: list[Turn] = []
    system: list[str] = []
    number = 0
    for message in messages:
        if message.role in ("system", "developer"):
            if message.text:
                system.append(message.text)
            continue
        if message.role == "user":
            if turns and turns[-1]["role"] != "user":
                number += 1
            turns.append(_turn(number, "user", content=message.text))
        elif message.role == "assistant":
            turns.extend(_assistant_turns(number, message))
        else:
            notes = {
                key: value
                for key, value in (("tool", message.function), ("error", message.error))
                if value
            }
            turns.append({**_turn(number, "environment", content=message.text), "notes": notes})
    return turns, "\n\n".join(system)


def _assistant_turns(number: int, message: Message) -> list[Turn]:
    thinking = f"<think>{message.reasoning}</think>\n" if message.reasoning else ""
    if not message.tool_calls:
        thought = thinking or None
        return [_turn(number, "agent", content=message.text, thought=thought)]
    turns = []
    for index, call in enumerate(message.tool_calls):
        # The message's text is the thought behind its calls: it goes with the first.
        thought = ((thinking + (message.text or "")) or None) if index == 0 else None
        turns.append(
            {
                **_turn(number, "agent", thought=thought, action=arguments_text(call.arguments)),
                "tool": call.function,
            }
        )
    return turns


def arguments_text(arguments: object) -> str:
    """A tool call's arguments as the page shows them: JSON, or the text the model wrote."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def _turn(
    number: int,
    role: str,
    *,
    content: str | None = None,
    thought: str | None = None,
    action: str | None = None,
) -> Turn:
    return {"round": number, "role": role, "content": content, "thought": thought, "action": action}
