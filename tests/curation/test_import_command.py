"""manage.py import_records: the report on success, the problems and a failing exit on failure."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from curation.models import ImportBatch
from tests.conftest import Cast
from tests.curation.import_files import rjudge_bytes, write_file
from tests.factories import rjudge_record

pytestmark = pytest.mark.subprocess


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_records", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_prints_counts_and_duplicates(cast: Cast, rjudge_dir: Path) -> None:
    out, err = run(cast.project.slug, str(rjudge_dir))

    assert err == ""
    lines = out.splitlines()
    assert lines[:3] == [
        "Imported 571 records: 571 new, 0 already in the project.",
        "Categories: Application 252, Finance 126, IoT 30, Program 128, Web 35",
        "Labels: safe 270, unsafe 301",
    ]
    assert lines[3] == "Exact duplicates (2 groups of equal content):"
    assert sorted(lines[4:6]) == ["  ids 142, 143", "  ids 200, 113"]
    assert lines[6] == "Indexed 571 records for the text search."


def test_it_indexes_the_records_itself_and_leaves_no_job_to_index_them_again(
    cast: Cast,
    rjudge_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks,
) -> None:
    sent: list[str] = []
    monkeypatch.setattr("curation.jobs.job_send", lambda task, *args, **options: sent.append(task))

    with django_capture_on_commit_callbacks(execute=True):
        out, _ = run(cast.project.slug, str(rjudge_dir))

    assert "Indexed 571 records for the text search." in out.splitlines()
    assert cast.project.import_batches.get().searchable_at is not None
    assert sent == []


def test_a_second_run_reports_the_records_as_already_there(cast: Cast, rjudge_dir: Path) -> None:
    run(cast.project.slug, str(rjudge_dir))

    out, _ = run(cast.project.slug, str(rjudge_dir))

    assert out.startswith("Imported 571 records: 0 new, 571 already in the project.")


def test_it_takes_the_format_and_the_category(cast: Cast, tmp_path: Path) -> None:
    path = write_file(tmp_path / "mail.data", rjudge_bytes([rjudge_record(1)]))

    out, _ = run(cast.project.slug, str(path), "--format", "rjudge", "--category", "Application")

    assert "Categories: Application 1" in out
    assert cast.project.records.get().source_path == "Application/mail.data"


def test_it_lists_the_problems_and_fails(cast: Cast, tmp_path: Path) -> None:
    bad = {**rjudge_record(2), "label": 7}
    path = write_file(tmp_path / "mail.json", rjudge_bytes([rjudge_record(1), bad]))
    err = StringIO()

    with pytest.raises(CommandError, match=r"The import failed \(1 problem\(s\)\); nothing"):
        call_command("import_records", cast.project.slug, str(path), stderr=err)

    assert err.getvalue() == (
        "mail.json, record 1, label: must be 0 (safe), 1 (unsafe) or null, not 7\n"
    )
    assert cast.project.import_batches.get().state == ImportBatch.State.FAILED
    assert not cast.project.records.exists()


def test_it_refuses_an_unknown_project(db: None, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="There is no project “nope”"):
        run("nope", str(tmp_path))


@pytest.mark.django_db(transaction=True)
def test_the_exit_code_says_whether_it_worked(cast: Cast, tmp_path: Path) -> None:
    good = write_file(tmp_path / "good" / "mail.json", rjudge_bytes([rjudge_record(1)]))
    bad = write_file(tmp_path / "bad" / "mail.json", b"[{")

    assert manage("import_records", cast.project.slug, str(good)).returncode == 0
    failed = manage("import_records", cast.project.slug, str(bad))
    assert failed.returncode == 1
    assert "mail.json: not valid JSON" in failed.stderr
    assert cast.project.records.count() == 1


def manage(*args: str) -> subprocess.CompletedProcess[str]:
    """Run manage.py in a process of its own, on the test database."""
    database = settings.DATABASES["default"]
    url = f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    return subprocess.run(  # noqa: S603 (the arguments are the test's own)
        [sys.executable, "manage.py", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "DATABASE_URL": url},
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
