"""Building import inputs for tests: R-Judge files, JSONL, zips (hostile ones included)."""

from __future__ import annotations

import hashlib
import io
import json
import stat
import zipfile
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile


def rjudge_bytes(records: list[object]) -> bytes:
    """A file as R-Judge writes it."""
    return json.dumps(records, indent=4, ensure_ascii=True).encode()


def jsonl_bytes(records: list[object]) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def write_file(path: Path, content: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def zip_of_folder(folder: Path, prefix: str = "data") -> bytes:
    """A zip of `folder`'s files under `prefix/`, as a user zips a data folder."""
    return zip_bytes(
        {
            f"{prefix}/{path.relative_to(folder).as_posix()}": path.read_bytes()
            for path in sorted(folder.rglob("*"))
            if path.is_file()
        }
    )


def zip_with_symlink(name: str, target: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        link = zipfile.ZipInfo(name)
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, target)
    return buffer.getvalue()


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, "application/octet-stream")


def sha256sums(folder: Path) -> dict[str, str]:
    """{relative path: sha256} read from the folder's SHA256SUMS file."""
    sums = {}
    for line in (folder / "SHA256SUMS").read_text().splitlines():
        digest, path = line.split(maxsplit=1)
        sums[path] = digest
    return sums


def sha256_tree(folder: Path) -> dict[str, str]:
    """{relative path: sha256} of every .json file under `folder`."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in folder.rglob("*.json")
    }
