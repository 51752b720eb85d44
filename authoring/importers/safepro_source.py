"""SafePro files as they arrive: a JSON file, the reference files beside it, or a zip of both.

Reading is strict about what JSON may say (a key twice in one object, NaN) and says where a file
is not JSON; what the tasks in it say, authoring.importers.safepro checks.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import IO, Any

from django.conf import settings

from curation.errors import DomainError


class SafeProSource:
    """A SafePro file and the reference files beside it: a JSON file, or a zip of both."""

    def __init__(self, name: str, document: bytes, files: zipfile.ZipFile | Path | None) -> None:
        self.name = name
        self._document = document
        self._files = files

    @classmethod
    def from_upload(cls, name: str, stream: IO[bytes]) -> SafeProSource:
        """An uploaded .json (no reference files) or .zip (the .json at its root, and files)."""
        if name.lower().endswith(".zip"):
            try:
                archive = zipfile.ZipFile(stream)
            except zipfile.BadZipFile:
                raise DomainError(f"{name} is not a readable zip file.") from None
            return cls._from_zip(name, archive)
        if not name.lower().endswith(".json"):
            raise DomainError("Upload a SafePro .json file, or a .zip of it with its files.")
        return cls(name, _read_capped(stream, settings.IMPORT_MAX_FILE_BYTES, name), None)

    @classmethod
    def from_path(cls, path: Path) -> SafeProSource:
        """A file on this machine: a .json whose reference files sit in its folder, or a .zip."""
        if path.suffix.lower() == ".zip":
            try:
                return cls._from_zip(path.name, zipfile.ZipFile(path))
            except zipfile.BadZipFile:
                raise DomainError(f"{path.name} is not a readable zip file.") from None
        with path.open("rb") as stream:
            document = _read_capped(stream, settings.IMPORT_MAX_FILE_BYTES, path.name)
        return cls(path.name, document, path.resolve().parent)

    @classmethod
    def _from_zip(cls, name: str, archive: zipfile.ZipFile) -> SafeProSource:
        members = archive.infolist()
        if len(members) > settings.IMPORT_MAX_ZIP_ENTRIES:
            raise DomainError(f"{name} holds more than {settings.IMPORT_MAX_ZIP_ENTRIES:,} files.")
        # The sizes a zip declares are the most its members yield (the zip reader stops there),
        # so their sum bounds what the import can unpack.
        if sum(member.file_size for member in members) > settings.IMPORT_MAX_UNPACKED_BYTES:
            raise DomainError(
                f"{name} unpacks to more than the limit of "
                f"{settings.IMPORT_MAX_UNPACKED_BYTES:,} bytes."
            )
        documents = [m for m in members if "/" not in m.filename and m.filename.endswith(".json")]
        if len(documents) != 1:
            raise DomainError(f"{name} must hold exactly one .json file at its root.")
        with archive.open(documents[0]) as stream:
            document = _read_capped(stream, settings.IMPORT_MAX_FILE_BYTES, documents[0].filename)
        return cls(name, document, archive)

    def document(self) -> object:
        """The parsed file; DomainError saying where it is not JSON, or not JSON to trust."""
        try:
            # utf-8-sig: editors on Windows start files with a byte order mark.
            text = self._document.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise DomainError(
                f"{self.name} is not UTF-8 text (byte {error.start:,} cannot be read)."
            ) from None
        if not text.strip():
            raise DomainError(f"{self.name} is empty.")
        try:
            return json.loads(text, object_pairs_hook=_without_repeats, parse_constant=_no_constant)
        except json.JSONDecodeError as error:
            raise DomainError(
                f"{self.name} is not valid JSON: {error.msg} at line {error.lineno}, "
                f"column {error.colno}."
            ) from None
        except _NotJson as error:
            raise DomainError(f"{self.name} {error}") from None

    def reference(self, path: str) -> bytes | None:
        """The bytes of a reference file (a checked relative path), None if it is not there."""
        limit = settings.TASK_FILE_MAX_BYTES
        if isinstance(self._files, zipfile.ZipFile):
            try:
                with self._files.open(path) as stream:
                    return stream.read(limit + 1)
            except KeyError:
                return None
        if isinstance(self._files, Path):
            target = (self._files / path).resolve()
            if not target.is_relative_to(self._files) or not target.is_file():
                return None
            with target.open("rb") as stream:
                return stream.read(limit + 1)
        return None


class _NotJson(ValueError):
    """Parsed, but not what a JSON file may say (the message follows the file's name)."""


def _without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A parser keeps the last of two equal keys: a file with two "<Sector> - <Occupation>" groups
    # of one name (files merged by hand) would lose the first group's tasks without a word.
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise _NotJson(f"has the key “{key}” twice in one object: each key may appear once.")
        document[key] = value
    return document


def _no_constant(name: str) -> None:
    raise _NotJson(f"holds {name}, which is not a JSON number.")


def _read_capped(stream: IO[bytes], limit: int, name: str) -> bytes:
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise DomainError(f"{name} is larger than the limit of {limit:,} bytes.")
    return data
