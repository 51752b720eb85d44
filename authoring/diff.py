"""Field-by-field differences between two revisions of a task, word by word.

Each field becomes a list of (kind, text) pieces, kind being "same", "ins" or "del"; the template
wraps them in <ins> and <del> and escapes the text like any other: task content is untrusted.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from authoring.models import TASK_FIELDS
from authoring.services.tasks import FIELD_LABELS

# Words and the whitespace between them, so that joining the pieces gives the text back.
_TOKENS = re.compile(r"\s+|[^\s]+")
# Past this many words on either side, differences are found line by line: comparing word by
# word costs the product of the two lengths.
WORD_DIFF_LIMIT = 5000

Piece = tuple[str, str]


@dataclass(frozen=True)
class FieldDiff:
    field: str
    label: str
    changed: bool
    pieces: list[Piece]


def field_text(field: str, value: Any) -> str:
    """A field of a revision's content as the text the diff compares."""
    if field == "messages":
        return "\n\n".join(f"{m.get('sender', '')}: {m.get('content', '')}" for m in value or [])
    if field == "reference_files":
        return "\n".join(
            f"{file['name']} (sha256 {file['sha256'][:12]}, {file['size']} bytes)"
            for file in value or []
        )
    return "" if value is None else str(value)


def text_diff(old: str, new: str) -> list[Piece]:
    """`new` against `old` as pieces: unchanged, inserted and deleted runs of text."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    if max(len(a), len(b)) > WORD_DIFF_LIMIT:
        a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    pieces: list[Piece] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for operation, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if operation == "equal":
            _add(pieces, "same", "".join(a[a_start:a_end]))
            continue
        if operation in ("delete", "replace"):
            _add(pieces, "del", "".join(a[a_start:a_end]))
        if operation in ("insert", "replace"):
            _add(pieces, "ins", "".join(b[b_start:b_end]))
    return pieces


def revision_diff(old: dict[str, Any] | None, new: dict[str, Any]) -> list[FieldDiff]:
    """Every field of `new`, compared with `old` (None for a first revision: nothing changed)."""
    diffs = []
    for field in TASK_FIELDS:
        new_text = field_text(field, new.get(field))
        if old is None:
            pieces = [("same", new_text)] if new_text else []
            diffs.append(FieldDiff(field, FIELD_LABELS[field], False, pieces))
            continue
        old_text = field_text(field, old.get(field))
        changed = old_text != new_text
        pieces = text_diff(old_text, new_text) if changed else [("same", new_text)]
        diffs.append(FieldDiff(field, FIELD_LABELS[field], changed, pieces))
    return diffs


def _add(pieces: list[Piece], kind: str, text: str) -> None:
    if not text:
        return
    if pieces and pieces[-1][0] == kind:
        pieces[-1] = (kind, pieces[-1][1] + text)
    else:
        pieces.append((kind, text))
