"""Import R-Judge, export it again: the same files, byte for byte."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from curation.exporters.rjudge import rjudge_export_folder
from curation.services.imports import import_path
from tests.conftest import Cast
from tests.curation.import_files import jsonl_bytes, sha256_tree, sha256sums, write_file
from tests.factories import rjudge_record


def test_the_exported_files_are_the_source_files(
    cast: Cast, rjudge_dir: Path, tmp_path: Path
) -> None:
    import_path(actor=cast.manager, project=cast.project, path=rjudge_dir)
    out = StringIO()

    call_command("export_rjudge", cast.project.slug, str(tmp_path / "out"), stdout=out)

    assert sha256_tree(tmp_path / "out") == sha256sums(rjudge_dir)
    assert out.getvalue() == f"Wrote 27 files to {tmp_path / 'out'}.\n"


def test_the_exported_records_are_json_equal_in_field_order(
    cast: Cast, rjudge_dir: Path, tmp_path: Path
) -> None:
    import_path(actor=cast.manager, project=cast.project, path=rjudge_dir)

    rjudge_export_folder(cast.project, tmp_path)

    for source in rjudge_dir.rglob("*.json"):
        exported = tmp_path / source.relative_to(rjudge_dir)
        source_records = json.loads(source.read_text())
        exported_records = json.loads(exported.read_text())
        assert exported_records == source_records
        assert [list(r) for r in exported_records] == [list(r) for r in source_records]


def test_hostile_category_names_stay_inside_the_folder(cast: Cast, tmp_path: Path) -> None:
    hostile = {**rjudge_record(1), "category": "../../..", "scenario": "../etc/passwd"}
    import_path(
        actor=cast.manager,
        project=cast.project,
        path=write_file(tmp_path / "in" / "records.jsonl", jsonl_bytes([hostile])),
    )

    written = rjudge_export_folder(cast.project, tmp_path / "out")

    assert written == ["_.._.._../_.._etc_passwd.json"]
    [file] = (tmp_path / "out").rglob("*.json")
    assert (tmp_path / "out") in file.resolve().parents
    assert json.loads(file.read_text()) == [hostile]


def test_it_refuses_an_unknown_project(tmp_path: Path, db: None) -> None:
    with pytest.raises(CommandError, match="There is no project “nope”"):
        call_command("export_rjudge", "nope", str(tmp_path))
