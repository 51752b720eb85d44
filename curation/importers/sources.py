"""The files an import reads: one file, a folder, or a zip of a folder, read within limits.

Archives are hostile until proven otherwise: member names may point outside the folder, members
may be symbolic links or other archives, and the sizes in a zip's headers may lie, so the limits
count the bytes actually unpacked.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO

import orjson
from django.conf import settings

from curation.formats.openai_chat import is_chat_line
from curation.importers.problems import FileRejected, Problem, Problems
from curation.models import ImportFormat

CHUNK_BYTES = 1024 * 1024
RECORD_SUFFIXES = {
    ".json": ImportFormat.RJUDGE,
    ".jsonl": ImportFormat.JSONL,
    ".eval": ImportFormat.INSPECT,
}
# Formats whose files hold a record a line.
LINE_FORMATS = (ImportFormat.JSONL, ImportFormat.OPENAI_CHAT)
ARCHIVE_SUFFIXES = (".zip", ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z", ".rar")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class ImportLimits:
    max_file_bytes: int
    max_unpacked_bytes: int
    max_zip_entries: int

    @classmethod
    def from_settings(cls) -> ImportLimits:
        return cls(
            max_file_bytes=settings.IMPORT_MAX_FILE_BYTES,
            max_unpacked_bytes=settings.IMPORT_MAX_UNPACKED_BYTES,
            max_zip_entries=settings.IMPORT_MAX_ZIP_ENTRIES,
        )


@dataclass(frozen=True)
class SourceFile:
    # Relative to the import's root, with forward slashes: "Application/mail.json".
    path: str
    format: ImportFormat
    # Inside an archive: its bytes count towards the archive's unpacked limit.
    packed: bool
    opener: Callable[[], IO[bytes]]
    # Bytes, as the file system or the archive's header says: for progress, never for limits.
    size: int

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name

    @property
    def stem(self) -> str:
        return PurePosixPath(self.path).stem

    @property
    def folder(self) -> str:
        """The folder holding the file below the import's root, "" for a file at the root."""
        parent = PurePosixPath(self.path).parent
        return parent.name if parent.parts else ""


class UnpackedBytes:
    """Bytes unpacked from an archive so far, in one reading of it."""

    def __init__(self) -> None:
        self.count = 0


@contextmanager
def open_source(
    path: Path, *, name: str, format: str, limits: ImportLimits, problems: Problems
) -> Iterator[list[SourceFile]]:
    """The record files at `path` (a file, a folder or a zip), in a stable order.

    `name` is what users call the input (an upload's original file name, or a path). Problems
    with the input's structure are added to `problems`; the files yielded are the readable ones.
    """
    name = PurePosixPath(name.replace("\\", "/")).name or name
    if path.is_dir():
        yield _folder_files(path, format, problems)
    elif not path.is_file():
        problems.add(Problem(name, None, "", "there is no file or folder at this path"))
        yield []
    elif _is_zip(path, name, format):
        if path.stat().st_size > limits.max_file_bytes:
            problems.add(_too_large(name, limits))
            yield []
            return
        try:
            archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as error:
            problems.add(Problem(name, None, "", f"not a readable zip archive ({error})"))
            yield []
            return
        with archive:
            yield _zip_files(archive, name, format, limits, problems)
    else:
        file_format = _single_file_format(path, name, format)
        yield [SourceFile(name, file_format, False, _opener(path), path.stat().st_size)]


def read_chunks(file: SourceFile, unpacked: UnpackedBytes, limits: ImportLimits) -> Iterator[bytes]:
    """The file's bytes, in chunks, stopping with FileRejected past the size limits."""
    size = 0
    try:
        with file.opener() as stream:
            while chunk := stream.read(CHUNK_BYTES):
                size += len(chunk)
                if size > limits.max_file_bytes:
                    raise FileRejected(_too_large(file.path, limits))
                if file.packed:
                    unpacked.count += len(chunk)
                    if unpacked.count > limits.max_unpacked_bytes:
                        raise FileRejected(
                            Problem(
                                file.path,
                                None,
                                "",
                                "the archive unpacks to more than the limit of "
                                f"{limits.max_unpacked_bytes:,} bytes",
                            )
                        )
                yield chunk
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as error:
        # A damaged or encrypted member, or one whose header lies about its size (CRC mismatch).
        raise FileRejected(Problem(file.path, None, "", f"cannot be unpacked ({error})")) from None
    except OSError as error:
        raise FileRejected(Problem(file.path, None, "", f"cannot be read ({error})")) from None


def _too_large(name: str, limits: ImportLimits) -> Problem:
    return Problem(
        name, None, "", f"the file is larger than the limit of {limits.max_file_bytes:,} bytes"
    )


def _is_zip(path: Path, name: str, format: str) -> bool:
    if name.lower().endswith(".zip"):
        return True
    if name.lower().endswith(".eval"):
        # An Inspect log is a zip archive of its own, read by Inspect.
        return False
    if format != ImportFormat.AUTO:
        return False
    with path.open("rb") as stream:
        return stream.read(4) == b"PK\x03\x04"


def _single_file_format(path: Path, name: str, format: str) -> ImportFormat:
    if format != ImportFormat.AUTO:
        return ImportFormat(format)
    suffix_format = RECORD_SUFFIXES.get(PurePosixPath(name).suffix.lower())
    if suffix_format is not None:
        return _sniffed(suffix_format, _opener(path))
    # No telling suffix: a JSON list is an R-Judge file, anything else is taken for JSONL.
    with path.open("rb") as stream:
        start = stream.read(64).lstrip(_BLANK)
    if start.startswith(b"["):
        return ImportFormat.RJUDGE
    return _sniffed(ImportFormat.JSONL, _opener(path))


def _member_format(path: str, format: str, opener: Callable[[], IO[bytes]]) -> ImportFormat | None:
    """How to read a file of a folder or archive; None for files that hold no records."""
    suffix_format = RECORD_SUFFIXES.get(PurePosixPath(path).suffix.lower())
    if suffix_format is None:
        return None
    if suffix_format == ImportFormat.INSPECT:
        # Nothing but Inspect reads an .eval file, whatever format was chosen.
        return suffix_format
    return _sniffed(suffix_format, opener) if format == ImportFormat.AUTO else ImportFormat(format)


_BLANK = b"\xef\xbb\xbf \t\r\n"
# What is read of a file to tell its format: enough for the first line of most transcripts, and
# little enough that an archive of many members costs little more to open than to list.
SNIFF_BYTES = 64 * 1024


def _sniffed(suffix_format: ImportFormat, opener: Callable[[], IO[bytes]]) -> ImportFormat:
    """What a file's start says it is, where its suffix leaves it open: a .json file holding
    an object is an Inspect log (an R-Judge file is a list), and a .jsonl file whose first line
    holds `messages` (and no R-Judge `contents`) holds chat transcripts."""
    if suffix_format not in (ImportFormat.RJUDGE, ImportFormat.JSONL):
        return suffix_format
    try:
        with opener() as stream:
            start = stream.read(SNIFF_BYTES).lstrip(_BLANK)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError):
        # Reading the file reports what is wrong with it.
        return suffix_format
    if suffix_format == ImportFormat.RJUDGE:
        return ImportFormat.INSPECT if start.startswith(b"{") else suffix_format
    first_line, newline, _ = start.partition(b"\n")
    try:
        first = orjson.loads(first_line)
    except orjson.JSONDecodeError:
        # A first line longer than what was read is judged by its start.
        looks_like_chat = b'"messages"' in first_line and b'"contents"' not in first_line
        first = {"messages": None} if not newline and looks_like_chat else None
    return ImportFormat.OPENAI_CHAT if is_chat_line(first) else suffix_format


def _hidden(parts: tuple[str, ...]) -> bool:
    # Editors' and archivers' litter: .DS_Store, ._mail.json, __MACOSX/.
    return any(part.startswith(".") or part == "__MACOSX" for part in parts)


def _folder_files(root: Path, format: str, problems: Problems) -> list[SourceFile]:
    files = []
    for folder, subfolders, names in os.walk(root):
        subfolders.sort()
        for name in sorted(names):
            full = Path(folder, name)
            relative = full.relative_to(root).as_posix()
            if _hidden(PurePosixPath(relative).parts):
                continue
            if full.is_symlink():
                if RECORD_SUFFIXES.get(full.suffix.lower()):
                    problems.add(Problem(relative, None, "", "symbolic links are not followed"))
                continue
            member_format = _member_format(relative, format, _opener(full))
            if member_format is None:
                continue
            files.append(
                SourceFile(relative, member_format, False, _opener(full), full.stat().st_size)
            )
    return files


def _opener(path: Path) -> Callable[[], IO[bytes]]:
    """Opens the file for its bytes when called. (A partial of path.open is typed as opening
    it for text, its default.)"""
    return lambda: path.open("rb")


def _zip_files(
    archive: zipfile.ZipFile, name: str, format: str, limits: ImportLimits, problems: Problems
) -> list[SourceFile]:
    members = archive.infolist()
    if len(members) > limits.max_zip_entries:
        problems.add(
            Problem(
                name,
                None,
                "",
                f"the archive has {len(members):,} entries; at most "
                f"{limits.max_zip_entries:,} are allowed",
            )
        )
        return []
    files = []
    for member in members:
        member_path = member.filename
        parts = PurePosixPath(member_path.replace("\\", "/")).parts
        if member_path.startswith(("/", "\\")) or _WINDOWS_DRIVE.match(member_path):
            problems.add(
                Problem(member_path, None, "", "absolute paths are not allowed in an archive")
            )
        elif ".." in parts:
            problems.add(
                Problem(member_path, None, "", "paths with '..' are not allowed in an archive")
            )
        elif stat.S_ISLNK(member.external_attr >> 16):
            problems.add(
                Problem(member_path, None, "", "symbolic links are not allowed in an archive")
            )
        elif member.is_dir() or _hidden(parts):
            continue
        elif member_path.lower().endswith(ARCHIVE_SUFFIXES):
            problems.add(
                Problem(member_path, None, "", "archives inside an archive are not unpacked")
            )
        elif (
            member_format := _member_format(member_path, format, partial(archive.open, member))
        ) is not None:
            opener = partial(archive.open, member)
            files.append(SourceFile("/".join(parts), member_format, True, opener, member.file_size))
    return files
