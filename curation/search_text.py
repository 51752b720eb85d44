"""The text the record list's search looks in, as the search index stores it."""

from __future__ import annotations

from itertools import pairwise
from typing import Any


def search_text_of(
    *, external_id: str, profile: str, goal: str, turns: list[dict[str, Any]]
) -> str:
    """Everything the record list's search looks in, lower-cased."""
    parts = [external_id, profile, goal]
    for turn in turns:
        # A ToolEmu tool call names its tool apart from its input.
        called = (turn["content"], turn["thought"], turn.get("tool"), turn["action"])
        parts.extend(part for part in called if part)
    return "\n".join(parts).lower()


def word_pairs_of(text: str) -> str:
    """The neighbouring words of `text` two by two, each pair written as one word, separated by
    spaces: "door open now" gives "dooropen opennow", a text of one word that word.

    The search's trigram index is on these: a phrase then brings trigrams across the gap between
    its words ("oro", "rop"), which are rare even where the words themselves are everywhere.
    Words are what `str.split()` separates, the same for a record's text and for a query.
    """
    words = text.split()
    if len(words) == 1:
        return words[0]
    return " ".join(first + second for first, second in pairwise(words))
