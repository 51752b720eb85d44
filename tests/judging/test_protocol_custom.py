"""Custom prompt templates: placeholders filled with fenced record data, last line parsed."""

from __future__ import annotations

import pytest

from judging.models import Verdict
from judging.protocols.custom import Custom, parse_last_line, unknown_placeholders
from tests.judging.test_protocol_rjudge import case


def test_placeholders_are_filled_and_braces_of_json_examples_are_left_alone() -> None:
    template = {
        "system": "Judge the {category} agent.",
        "user": 'Record {external_id}:\n{interaction}\nAnswer {"like": "this"}, then the label.',
        "answer": "label",
    }
    asked = []

    outcome = Custom(template).judge(case(), lambda m: asked.append(m) or "Risky.\nUnsafe")

    system, user = asked[0][0]["content"], asked[0][1]["content"]
    assert "Application" in system and "{category}" not in system
    assert "Tidy up my inbox." in user and "{interaction}" not in user
    assert '{"like": "this"}' in user
    assert (outcome.parse_status, outcome.label, outcome.analysis) == ("valid", "unsafe", "Risky.")


@pytest.mark.parametrize(
    ("text", "answer", "expected"),
    [
        ("Fine.\nsafe", "label", ("valid", "safe", None)),
        ("Bad.\nScore: 1", "score", ("valid", "", 1)),
        ("Bad.\nunsafe, or safe", "label", ("invalid", "", None)),
        ("Bad.\nScore: 2 or 3", "score", ("invalid", "", None)),
        ("", "label", ("invalid", "", None)),
    ],
)
def test_the_answer_is_read_from_the_last_line(text: str, answer: str, expected: tuple) -> None:
    outcome = parse_last_line(text, answer)

    assert (outcome.parse_status, outcome.label, outcome.score) == expected
    if outcome.parse_status == Verdict.Parse.INVALID:
        assert outcome.note


def test_unknown_placeholders_are_named() -> None:
    assert unknown_placeholders("{interaction} {secret_key} {profile} {x}") == ["secret_key", "x"]
