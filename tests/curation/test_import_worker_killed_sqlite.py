"""The embedded default for real, as `./studio up` runs it (SQLite, the broker and the cache on the
file system): a worker killed (kill -9) in the middle of a large uploaded import keeps nothing of
it, and a fresh worker imports and indexes every record once."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from curation.job_leases import job_liveness
from curation.progress import progress_read
from curation.services.imports import IMPORT_TASK, PROGRESS_KIND
from tests.curation.test_record_text_search_sqlite import migrated
from tests.factories import rjudge_record
from tests.workers import STALE_SECONDS, WAIT_SECONDS

__all__ = ["migrated"]

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]
# As many as the import the review killed; small records keep it to seconds on SQLite too.
RECORDS = 50_000

# The web server's part: a project, and an upload handed to the workers through the broker.
UPLOAD = """
import sys
import django

django.setup()
from django.core.files.uploadedfile import SimpleUploadedFile
from curation.services.imports import import_batch_create
from curation.services.projects import project_create

project = project_create(actor=None, name="Embedded", slug="embedded")
with open(sys.argv[1], "rb") as source:
    upload = SimpleUploadedFile("many.json", source.read())
print(import_batch_create(actor=None, project=project, upload=upload).pk)
"""


@pytest.fixture
def embedded(tmp_path: Path, migrated: Path, settings) -> dict[str, str | None]:
    """The environment of `./studio up`'s processes, on a migrated database of their own; the
    test reads their cache (leases and progress) where they write it."""
    shutil.copyfile(migrated, tmp_path / "studio.sqlite3")
    var = tmp_path / "var"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(var / "cache"),
        }
    }
    settings.JOB_STALE_SECONDS = int(STALE_SECONDS)
    return {
        "REDIS_URL": None,
        "CELERY_BROKER_URL": None,
        "MEDIA_ROOT": None,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'studio.sqlite3'}",
        "VAR_DIR": str(var),
        "DEBUG": "false",
        "JOB_STALE_SECONDS": STALE_SECONDS,
    }


def wait_for(
    condition: Callable[[], object], what: str, worker: subprocess.Popen | None = None
) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert worker is None or worker.poll() is None, f"The worker stopped waiting for {what}"
        assert time.monotonic() < deadline, f"Timed out waiting for {what}"
        time.sleep(0.1)


def test_an_embedded_import_survives_its_worker_being_killed(
    embedded: dict[str, str | None], start_worker, tmp_path: Path
) -> None:
    source = tmp_path / "many.json"
    source.write_bytes(
        orjson.dumps(
            [
                rjudge_record(number, label=number % 2, user=f"Record {number}: tidy my inbox.")
                for number in range(1, RECORDS + 1)
            ]
        )
    )
    env = {**os.environ, **embedded}
    upload = subprocess.run(  # noqa: S603 (this interpreter, the test's own script)
        [sys.executable, "-c", UPLOAD, str(source)],
        env={name: value for name, value in env.items() if value is not None},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    batch_id = int(upload.stdout.split()[-1])
    database = sqlite3.connect(tmp_path / "studio.sqlite3")

    def count(table: str) -> int:
        return database.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: S608

    def records_read() -> int:
        published = progress_read(PROGRESS_KIND, batch_id)
        return published[0] if published else 0

    first = start_worker("first", env=embedded)
    wait_for(lambda: records_read() >= RECORDS // 5, "a fifth read", first)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=20)
    assert count("curation_record") == 0
    wait_for(lambda: job_liveness(IMPORT_TASK, batch_id).stopped, "the lease to run out")

    second = start_worker("second", env=embedded)
    finished = "SELECT state, searchable_at IS NOT NULL FROM curation_importbatch WHERE id = ?"
    wait_for(
        lambda: database.execute(finished, [batch_id]).fetchone() == ("succeeded", 1),
        "the records stored and searchable",
        second,
    )
    ids = [row[0] for row in database.execute("SELECT external_id FROM curation_record")]
    assert sorted(ids, key=int) == [str(number) for number in range(1, RECORDS + 1)]
    assert count("curation_recordsearchtext") == RECORDS
    database.close()
