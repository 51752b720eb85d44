"""The field-by-field diff reviewers read between two revisions of a task."""

from __future__ import annotations

from authoring.diff import revision_diff, text_diff


def joined(pieces: list[tuple[str, str]], *kinds: str) -> str:
    return "".join(text for kind, text in pieces if kind in kinds)


def content(**fields: object) -> dict[str, object]:
    return {
        "sector": "Finance",
        "occupation": "Advisors",
        "prompt": "Plan my retirement.",
        "messages": [],
        "risk_category": "Financial harm",
        "malicious_motivation": "",
        "risk_outcome": "",
        "unsafe_criteria": "",
        "safe_criteria": "",
        "reference_files": [],
        **fields,
    }


def test_it_marks_the_words_that_changed() -> None:
    pieces = text_diff("The client retires at 60 next year.", "The client retires at 65 next year.")

    assert pieces == [
        ("same", "The client retires at "),
        ("del", "60"),
        ("ins", "65"),
        ("same", " next year."),
    ]


def test_the_old_and_new_texts_can_be_read_back_from_the_pieces() -> None:
    old = "Line one.\nLine two has words.\n\nAnd a third."
    new = "Line one!\nLine two has more words.\nAnd a third, changed."

    pieces = text_diff(old, new)

    assert joined(pieces, "same", "del") == old
    assert joined(pieces, "same", "ins") == new


def test_long_texts_are_compared_line_by_line() -> None:
    old = "\n".join(f"line {n} " * 3 for n in range(3000))
    new = old.replace("line 1500 line 1500", "line 1500 changed", 1)

    pieces = text_diff(old, new)

    assert joined(pieces, "same", "ins") == new
    assert [text for kind, text in pieces if kind == "ins"] == ["line 1500 changed line 1500 \n"]


def test_each_field_says_whether_it_changed() -> None:
    old = content(messages=[{"sender": "client", "content": "Hello."}])
    new = content(
        prompt="Plan my early retirement.",
        messages=[{"sender": "client", "content": "Hello."}],
        reference_files=[{"name": "brief.pdf", "sha256": "ab" * 32, "size": 10}],
    )

    diffs = {diff.field: diff for diff in revision_diff(old, new)}

    assert [name for name, diff in diffs.items() if diff.changed] == ["prompt", "reference_files"]
    assert ("ins", "early ") in diffs["prompt"].pieces
    assert diffs["messages"].pieces == [("same", "client: Hello.")]
    assert diffs["reference_files"].pieces == [("ins", f"brief.pdf (sha256 {'ab' * 6}, 10 bytes)")]
    assert diffs["prompt"].label == "Prompt"


def test_a_first_revision_has_nothing_changed() -> None:
    diffs = revision_diff(None, content())

    assert not any(diff.changed for diff in diffs)
    assert diffs[2].pieces == [("same", "Plan my retirement.")]
    assert diffs[5].pieces == []
