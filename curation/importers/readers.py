"""Records out of a file's bytes: an R-Judge file is a JSON list, a JSONL file a record a line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

import orjson

from curation.importers.problems import FileRejected, Problem
from curation.importers.sources import LINE_FORMATS, SourceFile

_BOM = b"\xef\xbb\xbf"


class Entry(NamedTuple):
    # The record's index in a JSON file, or its line number in a JSONL file.
    position: int
    record: object
    # How far into the file the record ends, in bytes (estimated within a JSON list).
    bytes_read: int
    # The record's source text when the file gives it whole (a JSONL line).
    raw: str | None = None
    # Why the line holds no record (it is not JSON); the record is None then.
    error: str | None = None


def position_unit(file: SourceFile) -> str:
    """What an Entry's position counts in this file, as problems report it."""
    return "line" if file.format in LINE_FORMATS else "record"


def read_entries(file: SourceFile, chunks: Iterable[bytes]) -> Iterator[Entry]:
    """The file's records in order; a JSONL line that is not JSON comes with its error."""
    if file.format in LINE_FORMATS:
        yield from _jsonl_entries(chunks)
    else:
        records = _json_list(file, chunks)
        for index, record in enumerate(records):
            yield Entry(index, record, file.size * (index + 1) // len(records))


def _json_list(file: SourceFile, chunks: Iterable[bytes]) -> list[object]:
    # One JSON document must be parsed whole; the size limit bounds what that costs.
    data = b"".join(chunks).removeprefix(_BOM)
    try:
        records = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise FileRejected(Problem(file.path, None, "", f"not valid JSON: {error}")) from None
    if not isinstance(records, list):
        raise FileRejected(
            Problem(file.path, None, "", "an R-Judge file must hold a JSON list of records")
        )
    return records


def _jsonl_entries(chunks: Iterable[bytes]) -> Iterator[Entry]:
    pending = b""
    number = 0
    read = 0
    for chunk in chunks:
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        for line in lines:
            number += 1
            read += len(line) + 1
            if entry := _jsonl_entry(number, line, read):
                yield entry
    if entry := _jsonl_entry(number + 1, pending, read + len(pending)):
        yield entry


def _jsonl_entry(number: int, line: bytes, read: int) -> Entry | None:
    line = line.strip()
    if number == 1:
        line = line.removeprefix(_BOM)
    if not line:
        return None
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        return Entry(number, None, read, error=f"not valid JSON: {error}")
    return Entry(number, record, read, line.decode())
