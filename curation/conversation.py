"""A record's normalised turns as the record page shows them.

Plain functions from stored turns to small frozen values; the template renders what they return
and decides nothing. Everything here is record content, which is hostile: it is only ever
returned as text for the template to escape.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from curation.formats.toolemu import split_thinking

ROLE_LABELS = {"user": "User", "agent": "Agent", "environment": "Environment"}
# An emulator's notes on the output it made up (ToolEmu), shown folded under these names.
NOTE_LABELS = {
    "summary": "Emulator's summary",
    "thought": "Emulator's thought",
    # A tool's answer in a chat transcript (Inspect, OpenAI-style): who answered, what failed.
    "tool": "Tool",
    "error": "Error",
}

# Environment outputs bigger than this are collapsed: a page listing file contents or search
# results in full would bury the agent's actions, which are what the reader judges.
COLLAPSE_CHARS = 600
COLLAPSE_LINES = 12
SUMMARY_CHARS = 100

# Parsing is skipped beyond this size: megabytes of hostile text would be parsed on every view.
MAX_PARSED_CHARS = 200_000

# A tool call: a tool name, then its arguments as a JSON object or a Python-literal dict, after a
# colon ("SendEmail: {...}"), directly ("GmailReadEmail{...}") or on a ReAct-style line of its
# own ("GmailSendEmail\nAction Input: {...}").
TOOL_CALL = re.compile(
    r"\s*(?P<tool>[A-Za-z_][\w.]*)(?::\s*|\s*\n\s*Action Input:\s*|)(?P<arguments>[\[{].*)",
    re.DOTALL,
)
# The end of a ReAct-style log (ToolEmu keeps the agent's whole output as its thought): the call
# the turn also stores apart, or the final answer it also stores as its content.
LOGGED_CALL = re.compile(
    r"(?:^|\n)[ \t]*Action:[ \t]*(?P<tool>[^\n]*?)[ \t]*"
    r"(?:\n[ \t]*Action Input:(?P<arguments>.*))?\Z",
    re.DOTALL,
)
LOGGED_ANSWER = re.compile(r"(?:^|\n)[ \t]*Final Answer:(?P<answer>.*)\Z", re.DOTALL)
THOUGHT_LABEL = re.compile(r"\A\s*Thought:[ \t]*")
# A newline or tab escaped in a JSON string, not preceded by an escaped backslash.
ESCAPED_BREAK = re.compile(r"(?<!\\)((?:\\\\)*)\\([nt])")


@dataclass(frozen=True)
class Text:
    """Part of a turn: indented JSON if it held a JSON value, else text with its line breaks."""

    text: str
    is_json: bool = False
    # The tool an action calls, when the action is a tool call, and what its toolkit says it does.
    tool: str = ""
    tool_summary: str = ""
    # Long environment outputs are collapsed under a summary of their first line and size.
    collapsed: bool = False
    summary: str = ""


@dataclass(frozen=True)
class Turn:
    number: int
    # Rounds counted 1.. in order of appearance, whatever the source numbered them.
    round_number: int
    # "user", "agent", "environment", or "other" for a role the studio does not know.
    role: str
    role_label: str
    # True for the first turn of every round but the first: a separator goes before it.
    starts_round: bool
    content: Text | None
    thought: Text | None
    action: Text | None
    # What the agent wrote in <think> blocks, shown folded: long, and rarely what is judged.
    thinking: Text | None = None
    notes: list[tuple[str, Text]] = field(default_factory=list)
    # Who marked the turn as evidence in their label, on pages that may show others' labels
    # (with_evidence); empty elsewhere.
    evidence_of: tuple[str, ...] = ()

    @property
    def element_id(self) -> str:
        return f"turn-{self.number}"


def parse_structured(text: str) -> dict | list | None:
    """The JSON object or array `text` holds, or None.

    Accepts JSON and Python literals (tools often print dicts with repr), and a JSON string that
    itself holds one of those, as R-Judge's environment outputs often are. Never evaluates code.
    """
    value: object = text
    # At most two layers: the quoted string, then what it quotes.
    for _ in range(2):
        if not isinstance(value, str) or len(value) > MAX_PARSED_CHARS:
            return None
        value = _loads(value.strip())
        if isinstance(value, dict | list):
            return value
    return None


def _loads(text: str) -> object:
    if not text or text[0] not in "{[\"'":
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _pretty_json(value: dict | list) -> str | None:
    """`value` as indented JSON, or None if it holds what JSON cannot (sets, bytes, tuple keys).

    Line breaks inside strings are shown as breaks, not as `\\n`: tool outputs are often a
    terminal's or a mail's text in one JSON string, unreadable on one line. The result is for
    reading only; it is no longer JSON a parser takes.
    """
    try:
        dumped = json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return "\n".join(_unescape_breaks(line) for line in dumped.split("\n"))


def _unescape_breaks(line: str, *, indent: str | None = None) -> str:
    """`line` with its escaped newlines and tabs as real ones; a continued line is indented
    under the line it continues (its own indent and two more spaces, unless `indent` says)."""
    if indent is None:
        indent = " " * (len(line) - len(line.lstrip(" ")) + 2)

    def unescape(match: re.Match[str]) -> str:
        return match[1] + ("\n" + indent if match[2] == "n" else "\t")

    return ESCAPED_BREAK.sub(unescape, line)


def structured_or_text(text: str) -> Text:
    """`text` pretty-printed when it is a JSON (or Python-literal) object or array."""
    value = parse_structured(text)
    pretty = _pretty_json(value) if value is not None else None
    if pretty is None:
        return Text(text=text)
    return Text(text=pretty, is_json=True)


def action_text(action: str) -> Text:
    """An agent's action: a tool call shows the tool apart from its pretty-printed arguments."""
    call = TOOL_CALL.fullmatch(action)
    if call:
        arguments = structured_or_text(call["arguments"])
        if arguments.is_json:
            return Text(text=arguments.text, is_json=True, tool=call["tool"])
    return structured_or_text(action)


def environment_text(content: str) -> Text:
    """An environment output, collapsed under its first line and size when the output is long.

    Long means the output as the tool gave it: pretty-printing a short one-line JSON object
    spreads it over many lines, but it is still quick to read.
    """
    shown = structured_or_text(content)
    if not shown.is_json:
        shown = Text(text=_output_text(content))
    lines = content.count("\n") + 1
    if len(content) <= COLLAPSE_CHARS and lines <= COLLAPSE_LINES:
        return shown
    first_line = next((line.strip() for line in content.splitlines() if line.strip()), "")
    if len(first_line) > SUMMARY_CHARS:
        first_line = first_line[: SUMMARY_CHARS - 1].rstrip() + "…"
    size = f"{lines:,} line{'s' * (lines != 1)}, {len(content):,} characters"
    return Text(
        text=shown.text,
        is_json=shown.is_json,
        collapsed=True,
        summary=f"{first_line} ({size})" if first_line else size,
    )


def _output_text(content: str) -> str:
    """A tool's text output as it read before it was JSON-encoded: a quoted JSON string is
    shown unquoted, and one line holding escaped newlines (`a\\nb`) as its lines. An output
    with real line breaks is shown as it is: its backslashes are the tool's own."""
    if len(content) <= MAX_PARSED_CHARS and content.startswith('"'):
        decoded = _loads(content.strip())
        if isinstance(decoded, str):
            return decoded
    if "\n" in content or "\\n" not in content:
        return content
    return _unescape_breaks(content, indent="")


def with_evidence(turns: Iterable[Turn], marks: Mapping[int, Iterable[str]]) -> list[Turn]:
    """`turns` with who marked each as evidence: `marks` gives names by turn number."""
    return [replace(turn, evidence_of=tuple(marks.get(turn.number, ()))) for turn in turns]


def conversation(
    turns: Iterable[Mapping[str, object]], *, tools: Mapping[str, str] | None = None
) -> list[Turn]:
    """The turns numbered 1..n in stored order, with their parts ready to show; `tools` gives
    the summaries of the tools the project's toolkits describe, by name."""
    shown: list[Turn] = []
    round_number, previous_round = 0, object()
    for number, turn in enumerate(turns, start=1):
        role = str(turn.get("role") or "")
        known = role in ROLE_LABELS
        starts_round = turn.get("round") != previous_round
        previous_round = turn.get("round")
        round_number += starts_round
        content, thought, action = (
            _text(turn.get(key)) for key in ("content", "thought", "action")
        )
        thinking = None
        if thought is not None and "<think>" in thought:
            thought, thinking = (part or None for part in split_thinking(thought))
        if thought is not None:
            thought = _thought_alone(thought, tool=_text(turn.get("tool")), action=action)
            thought = _thought_alone_of_answer(thought, content)
        shown.append(
            Turn(
                number=number,
                round_number=round_number,
                role=role if known else "other",
                role_label=ROLE_LABELS[role] if known else role or "Unknown",
                starts_round=starts_round and number > 1,
                content=None if content is None else _content_text(role, content),
                thought=None if thought is None else Text(text=thought),
                action=None if action is None else _action(turn, action, tools or {}),
                thinking=None if thinking is None else Text(text=thinking),
                notes=_notes(turn.get("notes")),
            )
        )
    return shown


def _action(turn: Mapping[str, object], action: str, tools: Mapping[str, str]) -> Text:
    tool = _text(turn.get("tool"))
    if tool is None:
        return action_text(action)
    # The tool is known apart from its input: tool names may hold ": " themselves, between the
    # toolkit's name and the tool's ("GoogleHome: ListDevices" for GoogleHomeListDevices).
    arguments = structured_or_text(action)
    summary = tools.get(tool) or tools.get(tool.replace(": ", "")) or ""
    return Text(text=arguments.text, is_json=arguments.is_json, tool=tool, tool_summary=summary)


def _thought_alone(thought: str, *, tool: str | None, action: str | None) -> str | None:
    """The thought without the tool call it ends with when the turn shows that call as its
    action (ToolEmu: "Thought: ...\\nAction: X\\nAction Input: {...}"), and without its
    "Thought:" label, which the page shows. A logged call that differs from the action stays:
    what the agent wrote and what it ran are then both worth reading."""
    logged = LOGGED_CALL.search(thought)
    if logged and action is not None:
        if tool is None:
            call = TOOL_CALL.fullmatch(action)
            tool, action = (call["tool"], call["arguments"]) if call else (None, action)
        arguments = logged["arguments"]
        same_tool = tool is not None and _same_tool(logged["tool"], tool)
        if same_tool and (arguments is None or _same_text(arguments, action)):
            thought = thought[: logged.start()]
    return THOUGHT_LABEL.sub("", thought).strip() or None


def _thought_alone_of_answer(thought: str | None, content: str | None) -> str | None:
    """The thought without the final answer it ends with when the turn shows that answer as
    its content (ToolEmu's last step: "Thought: ...\\nFinal Answer: ...")."""
    if thought is None or content is None:
        return thought
    logged = LOGGED_ANSWER.search(thought)
    if logged and logged["answer"].strip() == content.strip():
        return thought[: logged.start()].strip() or None
    return thought


def _same_tool(logged: str, tool: str) -> bool:
    # ToolEmu names a tool with its toolkit, with or without ": " between them.
    return logged.replace(": ", "") == tool.replace(": ", "")


def _same_text(logged: str, stored: str) -> bool:
    """Whether a logged tool input is the stored one: the same text, or the same JSON value."""
    if logged.strip() == stored.strip():
        return True
    value = parse_structured(logged)
    return value is not None and value == parse_structured(stored)


def _notes(notes: object) -> list[tuple[str, Text]]:
    if not isinstance(notes, Mapping):
        return []
    shown = ((NOTE_LABELS.get(str(key), str(key)), _text(value)) for key, value in notes.items())
    return [(label, Text(text=text)) for label, text in shown if text is not None]


def _content_text(role: str, content: str) -> Text:
    return environment_text(content) if role == "environment" else structured_or_text(content)


def _text(value: object) -> str | None:
    """A turn field as text; importers store strings, but a stray number or object still shows."""
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def test_case_sections(case: Mapping[str, object] | None) -> list[tuple[str, list[str]]]:
    """A test case's fields as (heading, lines): a field holding named lists (ToolEmu's
    Underspecifications) gives a section per name."""
    if not case:
        return []
    sections: list[tuple[str, list[str]]] = []
    for name, value in case.items():
        if name in ("name", "index"):
            continue
        if isinstance(value, Mapping):
            sections.extend((f"{name}: {key}", _lines(part)) for key, part in value.items())
        else:
            sections.append((str(name), _lines(value)))
    return sections


def _lines(value: object) -> list[str]:
    values = value if isinstance(value, list) else [value]
    return [text for text in (_text(item) for item in values) if text is not None]


def metadata_items(metadata: Mapping[str, object]) -> list[tuple[str, Text]]:
    """A record's extra source fields as (name, value) pairs, objects and arrays pretty-printed."""
    return [
        (
            str(key),
            Text(text=value)
            if isinstance(value, str)
            else Text(
                text=json.dumps(value, indent=2, ensure_ascii=False),
                is_json=isinstance(value, dict | list),
            ),
        )
        for key, value in metadata.items()
    ]
