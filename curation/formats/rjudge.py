"""One source record checked and normalised: the only code that knows the R-Judge record shape.

R-Judge records are `{id, scenario, profile, goal, contents, label, risk_description,
attack_type}`; ASSEBench records add `risk_type`, `failure_mode`, `application_scenario` and
`ambiguous` and may lack `scenario`, `goal` and `attack_type`. Keys without a column of their own
are kept in `metadata`, and the record's own text in `raw`, so that nothing is lost on export.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from curation.choices import SafetyLabel, SourceFormat

ROLES = ("user", "agent", "environment")
# Optional text fields and their longest allowed value (the column's size), None for no limit.
TEXT_FIELDS: dict[str, int | None] = {
    "scenario": 200,
    "profile": None,
    "goal": None,
    "risk_description": None,
    "attack_type": 50,
    "category": 100,
}
REQUIRED_FIELDS = ("profile", "contents")
KNOWN_FIELDS = frozenset({"id", "label", "contents", *TEXT_FIELDS})
EXTERNAL_ID_MAX_LENGTH = 200
PREVIEW_CHARS = 200


@dataclass(slots=True)
class NormalisedRecord:
    external_id: str
    # The record's own category and scenario, "" when it names none (the file then decides).
    category: str
    scenario: str
    profile: str
    goal: str
    turns: list[dict[str, Any]]
    attack_type: str
    gold_label: str
    gold_risk_description: str
    content_hash: str
    raw: str
    metadata: dict[str, Any]
    source_format: str = SourceFormat.RJUDGE
    # Who made the interaction, when the format says (Record.source_*).
    source_agent: str = ""
    source_emulator: str = ""
    source_case: str = ""
    source_case_index: int | None = None
    source_replicate: str = ""

    @property
    def preview(self) -> str:
        """The start of the user's first message, as lists show it."""
        first = next((turn["content"] for turn in self.turns if turn["role"] == "user"), None)
        return (first or "")[:PREVIEW_CHARS]


class InvalidRecord(Exception):
    """The record does not have the expected shape; `problems` holds (field, message) pairs."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))
        self.problems = problems


def content_hash(record: dict[str, Any]) -> str:
    """sha256 of the record without its id, serialised canonically: equal for exact duplicates."""
    return hashlib.sha256(_canonical(record)).hexdigest()


def normalise_record(record: object, *, raw: str | None = None) -> NormalisedRecord:
    """Check a parsed source record and normalise it; `raw` is its source text when known.

    Raises InvalidRecord naming every field that is wrong.
    """
    if not isinstance(record, dict):
        raise InvalidRecord([("", f"a record must be a JSON object, not {_kind(record)}")])
    problems: list[tuple[str, str]] = []
    text = _text_fields(record, problems)
    for key in REQUIRED_FIELDS:
        if record.get(key) is None:
            problems.append((key, "is missing"))
    turns = _turns(record.get("contents"), problems)
    gold_label = _gold_label(record.get("label"), problems)
    canonical = _canonical(record)
    digest = hashlib.sha256(canonical).hexdigest()
    external_id = _external_id(record.get("id"), digest, problems)
    # PostgreSQL text and jsonb cannot hold NUL; find it only when the cheap test says maybe.
    if b"\\u0000" in canonical or "\x00" in external_id:
        nul_at = _nul_path(record, "")
        if nul_at is not None:
            problems.append((nul_at, "contains a NUL character (\\u0000), which cannot be stored"))
    if problems:
        raise InvalidRecord(problems)
    return NormalisedRecord(
        external_id=external_id,
        category=text["category"],
        scenario=text["scenario"],
        profile=text["profile"],
        goal=text["goal"],
        turns=turns,
        attack_type=text["attack_type"],
        gold_label=gold_label,
        gold_risk_description=text["risk_description"],
        content_hash=digest,
        raw=raw if raw is not None else orjson.dumps(record).decode(),
        metadata={key: value for key, value in record.items() if key not in KNOWN_FIELDS},
    )


def rjudge_turns(raw: str) -> list[dict[str, Any]]:
    """The turns of a stored R-Judge record (checked when it was imported)."""
    problems: list[tuple[str, str]] = []
    return _turns(orjson.loads(raw).get("contents"), problems)


def _canonical(record: dict[str, Any]) -> bytes:
    return orjson.dumps(
        {key: value for key, value in record.items() if key != "id"},
        option=orjson.OPT_SORT_KEYS,
    )


def _text_fields(record: dict[str, Any], problems: list[tuple[str, str]]) -> dict[str, str]:
    text = {}
    for key, limit in TEXT_FIELDS.items():
        value = record.get(key)
        if value is None:
            value = ""
        elif type(value) is not str:
            problems.append((key, f"must be text, not {_kind(value)}"))
            value = ""
        elif limit is not None and len(value) > limit:
            problems.append((key, f"is longer than {limit} characters"))
        text[key] = value
    return text


def _turns(contents: object, problems: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """The rounds flattened into one list of turns.

    Every import and every page that shows a record runs this, so the loop checks types with
    `type(...) is` and builds a turn's place in the record ("contents[2][1]") only for problems.
    """
    turns: list[dict[str, Any]] = []
    if contents is None:
        return turns
    if type(contents) is not list:
        problems.append(("contents", f"must be a list of rounds, not {_kind(contents)}"))
        return turns
    for number, turns_of_round in enumerate(contents):
        if type(turns_of_round) is not list:
            problems.append(
                (f"contents[{number}]", f"must be a list of turns, not {_kind(turns_of_round)}")
            )
            continue
        for position, turn in enumerate(turns_of_round):
            if type(turn) is not dict:
                problems.append(
                    (
                        f"contents[{number}][{position}]",
                        f"must be an object with a role, not {_kind(turn)}",
                    )
                )
                continue
            role = turn.get("role")
            if role == "agent":
                content = None
                thought = turn.get("thought")
                action = turn.get("action")
            elif role == "user" or role == "environment":
                content = turn.get("content")
                thought = action = None
            else:
                problems.append(
                    (
                        f"contents[{number}][{position}].role",
                        f"unknown role {_shorten(role)}: expected user, agent or environment",
                    )
                )
                continue
            # R-Judge has null contents, thoughts and actions (an environment that said nothing).
            if not (
                (content is None or type(content) is str)
                and (thought is None or type(thought) is str)
                and (action is None or type(action) is str)
            ):
                for key, value in (("content", content), ("thought", thought), ("action", action)):
                    if value is not None and type(value) is not str:
                        problems.append(
                            (
                                f"contents[{number}][{position}].{key}",
                                f"must be text or null, not {_kind(value)}",
                            )
                        )
                continue
            turns.append(
                {
                    "round": number,
                    "role": role,
                    "content": content,
                    "thought": thought,
                    "action": action,
                }
            )
    return turns


def _gold_label(label: object, problems: list[tuple[str, str]]) -> str:
    # bool is an int in Python, and `true` is not a label.
    if label is None:
        return ""
    if type(label) is int and label in (0, 1):
        return SafetyLabel.UNSAFE if label == 1 else SafetyLabel.SAFE
    problems.append(("label", f"must be 0 (safe), 1 (unsafe) or null, not {_shorten(label)}"))
    return ""


def _external_id(value: object, digest: str, problems: list[tuple[str, str]]) -> str:
    if value is None:
        # Records without an id are known by their content.
        return digest
    if isinstance(value, bool) or not isinstance(value, int | str):
        problems.append(("id", f"must be a whole number or text, not {_kind(value)}"))
        return digest
    external_id = str(value)
    if not external_id.strip():
        problems.append(("id", "is empty"))
    elif len(external_id) > EXTERNAL_ID_MAX_LENGTH:
        problems.append(("id", f"is longer than {EXTERNAL_ID_MAX_LENGTH} characters"))
    return external_id


def _nul_path(value: object, path: str) -> str | None:
    if isinstance(value, str):
        return path if "\x00" in value else None
    items: Any = ()
    if isinstance(value, dict):
        items = ((f"{path}.{key}" if path else str(key), item) for key, item in value.items())
    elif isinstance(value, list):
        items = ((f"{path}[{index}]", item) for index, item in enumerate(value))
    for item_path, item in items:
        found = _nul_path(item, item_path)
        if found is not None:
            return found
    return None


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _shorten(value: object, limit: int = 40) -> str:
    text = orjson.dumps(value).decode() if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
