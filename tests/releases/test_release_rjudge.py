"""Releasing the real R-Judge dataset with its gold labels gives back its files."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from releases.build import release_check, release_folder
from releases.models import Release
from releases.services import release_build
from tests.conftest import Cast
from tests.releases.helpers import rjudge_gold_release

pytestmark = pytest.mark.django_db


@pytest.fixture
def gold_release(cast: Cast, rjudge_dir: Path, settings, tmp_path: Path) -> Release:
    settings.MEDIA_ROOT = tmp_path / "media"
    release = rjudge_gold_release(cast.project, cast.manager, rjudge_dir)
    return release_build(release.pk)


def test_the_rjudge_layout_of_a_gold_release_is_json_equal_to_the_source(
    gold_release: Release, rjudge_dir: Path
) -> None:
    assert gold_release.state == Release.State.BUILT
    assert gold_release.summary["records"] == 571
    assert gold_release.summary["labels"] == {"safe": 270, "unsafe": 301}

    with zipfile.ZipFile(release_folder(gold_release) / "rjudge.zip") as archive:
        names = sorted(archive.namelist())
        sources = sorted(rjudge_dir.rglob("*.json"))
        assert names == [f"data/{s.relative_to(rjudge_dir).as_posix()}" for s in sources]
        for source in sources:
            released = json.loads(archive.read(f"data/{source.relative_to(rjudge_dir).as_posix()}"))
            original = json.loads(source.read_text())
            assert released == original
            assert [list(r) for r in released] == [list(r) for r in original]


def test_building_the_same_release_again_gives_the_same_bytes(gold_release: Release) -> None:
    folder = release_folder(gold_release)
    first = {path.name: path.read_bytes() for path in folder.iterdir()}
    Release.objects.filter(pk=gold_release.pk).update(state=Release.State.PENDING)

    release_build(gold_release.pk)

    assert {path.name: path.read_bytes() for path in folder.iterdir()} == first
    assert sorted(first) == [
        "README.md",
        "judge_dataset.jsonl",
        "judge_sft.jsonl",
        "judge_sft_openai.jsonl",
        "judge_task.py",
        "labels.csv",
        "manifest.json",
        "records.jsonl",
        "records.parquet",
        "rjudge.zip",
    ]
    assert release_check(Release.objects.get(pk=gold_release.pk)) == []
