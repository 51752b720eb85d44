"""The record list's search: the text it looks in, and what a query asks of it.

A query is read as a search box reads it: every word is required, in any order; "quoted words"
are a phrase; a word or phrase after a lone `-` must not be there. Nothing else is an operator:
`OR`, `NEAR`, `*`, `:` or brackets are words or punctuation like any other. A token without a
letter or a digit is ignored (a query of punctuation alone holds no word, which the record
list's form refuses), and punctuation within a word separates it (`shell-co.pdf` is the phrase
"shell co pdf"). The database matches
each term by its own full-text search (see selectors._text_matches), words by their stems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# PostgreSQL's text search configuration for records (migration 0011): English stemming
# without English stop words, so that "the" or "to be or not to be" can still be looked for.
SEARCH_CONFIG = "studio_search"
# SQLite's FTS5 table of each record's text, its rowid the record's id (migration 0011).
FTS_TABLE = "curation_recordsearch_fts"

# What separates words: anything but a letter or a digit, for PostgreSQL as for SQLite's FTS5
# tokenizer. PostgreSQL's own parser would read "shell-co.pdf" or "a@b.org" as one word, which a
# search for "shell-co" or "b.org" could not find; a file name or an address is a phrase here.
NOT_WORD = re.compile(r"[\W_]+")
# The same for ASCII text, as a table for bytes.translate: most records are ASCII, and the
# table is about ten times faster than NOT_WORD, which was most of the Python time of indexing
# (see docs/benchmarks.md). It makes each separator a space, where NOT_WORD makes a run of them
# one: neither index counts spaces.
ASCII_NOT_WORD = bytes(c if chr(c).isalnum() else ord(" ") for c in range(128)) + bytes(
    range(128, 256)
)
# A term: an optional `-`, then a quoted phrase (its closing quote optional) or a run of
# characters that are neither spaces nor quotes.
TERM = re.compile(r'(-?)(?:"([^"]*)"?|([^\s"]+))')


@dataclass(frozen=True)
class SearchTerms:
    """A query's words and phrases: those a record must hold and those it must not."""

    required: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()


def search_terms_of(query: str) -> SearchTerms:
    required: list[str] = []
    excluded: list[str] = []
    for match in TERM.finditer(query):
        minus, phrase, word = match.groups()
        term = words_of(phrase if phrase is not None else word).strip()
        if term:
            (excluded if minus else required).append(term)
    return SearchTerms(required=tuple(required), excluded=tuple(excluded))


def search_reading(query: str) -> str:
    """How a query that leaves words out was read, for the list to say beside what it found;
    "" for one that leaves nothing out.

    A shell command's flags read as exclusions (`rm -rf` is "rm" without "rf"), which finds
    fewer records than the command, quoted, does: the reading says so, and how to quote it.
    """
    terms = search_terms_of(query)
    if not terms.excluded:
        return ""
    reading = f"Records with {_listed(terms.required, 'and')} and without "
    reading += _listed(terms.excluded, "or")
    # Words written with a `-` in front, as a flag is; `-"a phrase"` was meant to leave it out.
    flags = [
        match.group(0)
        for match in TERM.finditer(query)
        if match.group(1) and match.group(3) is not None and words_of(match.group(3)).strip()
    ]
    if not flags:
        return f"{reading}."
    # A query without quotes is found as written once it is one phrase; in one with quotes of
    # its own, each flag is quoted alone.
    to_write = [" ".join(query.split())] if '"' not in query else flags
    it = "it" if len(to_write) == 1 else "them"
    return (
        f"{reading} (a word after a lone - is left out; write "
        f"{_listed(to_write, 'and')} in quotes to find {it})."
    )


def _listed(terms: tuple[str, ...] | list[str], conjunction: str) -> str:
    """`"a"`, `"a" and "b"`, `"a", "b" and "c"`."""
    quoted = [f'"{term}"' for term in terms]
    if len(quoted) == 1:
        return quoted[0]
    return f"{', '.join(quoted[:-1])} {conjunction} {quoted[-1]}"


def words_of(text: str) -> str:
    """`text` with what separates its words made spaces."""
    if text.isascii():
        return text.encode("ascii").translate(ASCII_NOT_WORD).decode("ascii")
    return NOT_WORD.sub(" ", text)


def fts5_query_of(terms: SearchTerms) -> str:
    """The FTS5 query for SQLite: each term in quotes, so that none of FTS5's operators applies
    (a term holds letters, digits and spaces only)."""
    query = "(" + " AND ".join(f'"{term}"' for term in terms.required) + ")"
    return "".join([query, *(f' NOT "{term}"' for term in terms.excluded)])


def search_text_of(
    *, external_id: str, profile: str, goal: str, turns: list[dict[str, Any]]
) -> str:
    """Everything the record list's search looks in."""
    parts = [external_id, profile, goal]
    for turn in turns:
        # A ToolEmu tool call names its tool apart from its input.
        called = (turn["content"], turn["thought"], turn.get("tool"), turn["action"])
        parts.extend(part for part in called if part)
    return "\n".join(parts)
