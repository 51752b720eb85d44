"""Zips: a zip of the data folder imports; hostile zips are refused and nothing is written."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

from curation.models import ImportBatch, Record
from curation.services.imports import import_path
from tests.conftest import Cast
from tests.curation.import_files import (
    rjudge_bytes,
    write_file,
    zip_bytes,
    zip_of_folder,
    zip_with_symlink,
)
from tests.factories import rjudge_record

GOOD = rjudge_bytes([rjudge_record(1)])


def import_zip(cast: Cast, tmp_path: Path, content: bytes) -> ImportBatch:
    path = write_file(tmp_path / "upload.zip", content)
    return import_path(actor=cast.manager, project=cast.project, path=path)


def assert_refused(batch: ImportBatch, file: str, message: str) -> None:
    assert batch.state == ImportBatch.State.FAILED
    assert [(e["file"], e["index"]) for e in batch.errors] == [(file, None)]
    assert message in batch.errors[0]["message"]
    assert not Record.objects.exists()


def test_a_zip_of_the_data_folder_imports_every_record(
    cast: Cast, tmp_path: Path, rjudge_dir: Path
) -> None:
    batch = import_zip(cast, tmp_path, zip_of_folder(rjudge_dir))

    assert batch.state == ImportBatch.State.SUCCEEDED
    assert batch.created_count == 571
    assert batch.category_counts["IoT"] == 30
    assert cast.project.records.get(external_id="1").source_path.count("/") == 1


def test_it_refuses_a_zip_with_an_absolute_path(cast: Cast, tmp_path: Path) -> None:
    content = zip_bytes({"Application/mail.json": GOOD, "/etc/cron.d/mail.json": GOOD})

    batch = import_zip(cast, tmp_path, content)

    assert_refused(batch, "/etc/cron.d/mail.json", "absolute paths are not allowed")


def test_it_refuses_a_zip_with_parent_paths(cast: Cast, tmp_path: Path) -> None:
    content = zip_bytes({"Application/mail.json": GOOD, "data/../../outside.json": GOOD})

    batch = import_zip(cast, tmp_path, content)

    assert_refused(batch, "data/../../outside.json", "paths with '..' are not allowed")


def test_it_refuses_a_zip_with_a_symbolic_link(cast: Cast, tmp_path: Path) -> None:
    batch = import_zip(cast, tmp_path, zip_with_symlink("Application/mail.json", "/etc/passwd"))

    assert_refused(batch, "Application/mail.json", "symbolic links are not allowed")


def test_it_does_not_unpack_a_zip_inside_the_zip(cast: Cast, tmp_path: Path) -> None:
    inner = zip_bytes({"Application/mail.json": GOOD})

    batch = import_zip(cast, tmp_path, zip_bytes({"inner.zip": inner}))

    assert_refused(batch, "inner.zip", "archives inside an archive are not unpacked")


def test_it_refuses_a_zip_bomb(cast: Cast, tmp_path: Path, settings) -> None:
    settings.IMPORT_MAX_UNPACKED_BYTES = 5 * 1024 * 1024
    # Twenty megabytes of spaces: valid JSON once unpacked, a few kilobytes packed.
    bomb = b"[" + b" " * (20 * 1024 * 1024) + b"]"
    content = zip_bytes({"Application/mail.json": bomb})
    assert len(content) < 100_000

    batch = import_zip(cast, tmp_path, content)

    assert_refused(batch, "Application/mail.json", "unpacks to more than the limit of 5,242,880")


def test_it_counts_unpacked_bytes_across_members(cast: Cast, tmp_path: Path, settings) -> None:
    settings.IMPORT_MAX_UNPACKED_BYTES = 5 * 1024 * 1024
    padded = b"[" + b" " * (2 * 1024 * 1024) + b"]"
    content = zip_bytes({f"Application/s{n}.json": padded for n in range(3)})

    batch = import_zip(cast, tmp_path, content)

    assert_refused(batch, "Application/s2.json", "unpacks to more than the limit")


def test_it_does_not_trust_the_sizes_in_the_zip_headers(cast: Cast, tmp_path: Path) -> None:
    bomb = b"[" + b" " * (20 * 1024 * 1024) + b"]"
    content = lie_about_sizes(zip_bytes({"Application/mail.json": bomb}), claimed=100)
    assert zipfile.ZipFile(io.BytesIO(content)).infolist()[0].file_size == 100

    batch = import_zip(cast, tmp_path, content)

    assert_refused(batch, "Application/mail.json", "cannot be unpacked")


def test_it_refuses_a_zip_with_too_many_entries(cast: Cast, tmp_path: Path, settings) -> None:
    settings.IMPORT_MAX_ZIP_ENTRIES = 5
    content = zip_bytes({f"Application/s{n}.json": GOOD for n in range(6)})

    batch = import_zip(cast, tmp_path, content)

    assert_refused(batch, "upload.zip", "the archive has 6 entries; at most 5 are allowed")


def test_it_refuses_a_file_that_is_not_a_zip(cast: Cast, tmp_path: Path) -> None:
    batch = import_zip(cast, tmp_path, b"PK\x03\x04 but not really")

    assert_refused(batch, "upload.zip", "not a readable zip archive")


def lie_about_sizes(content: bytes, *, claimed: int) -> bytes:
    """The zip with its only member's uncompressed size replaced in both headers."""
    data = bytearray(content)
    local = data.index(b"PK\x03\x04")
    struct.pack_into("<I", data, local + 22, claimed)
    central = data.index(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, claimed)
    return bytes(data)
