"""The R-Judge zip of a release is compressed at the fastest level, on every supported Python.

Python 3.13 renamed the attribute that sets a zip entry's level; the build sets the name the
running Python knows. A level that silently went back to zlib's default would still build, so
this reads the stored bytes and compares them with what each level gives.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from releases.build import release_folder
from releases.models import LabelBasis, Release
from releases.record_files import RJUDGE_ZIP, ZIP_LEVEL
from tests.conftest import Cast
from tests.releases.helpers import built_release, record

pytestmark = pytest.mark.django_db

LOCAL_HEADER = struct.Struct("<4s5H3L2H")


def stored_bytes(path: Path, info: zipfile.ZipInfo) -> bytes:
    """An entry's data as the archive holds it, compressed."""
    with path.open("rb") as archive:
        archive.seek(info.header_offset)
        *_, name_length, extra_length = LOCAL_HEADER.unpack(archive.read(LOCAL_HEADER.size))
        archive.seek(name_length + extra_length, 1)
        return archive.read(info.compress_size)


def deflated(data: bytes, level: int) -> bytes:
    """Raw deflate, as zip entries hold it."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


@pytest.fixture
def release(cast: Cast) -> Release:
    for number in range(1, 41):
        record(cast.project, number, label=number % 2)
    return built_release(cast.project, cast.manager, label_basis=LabelBasis.GOLD)


def test_the_rjudge_zip_entries_are_deflated_at_the_fastest_level(release: Release) -> None:
    path = release_folder(release) / RJUDGE_ZIP
    with zipfile.ZipFile(path) as archive:
        entries = archive.infolist()
        contents = {info.filename: archive.read(info) for info in entries}

    assert entries
    for info in entries:
        content = contents[info.filename]
        assert info.compress_type == zipfile.ZIP_DEFLATED
        # Otherwise the comparison below could not tell the levels apart.
        assert deflated(content, ZIP_LEVEL) != deflated(content, zlib.Z_DEFAULT_COMPRESSION)
        assert stored_bytes(path, info) == deflated(content, ZIP_LEVEL)
