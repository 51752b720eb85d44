"""A release is built into the files of the layout it was created with: one made before the
Inspect, judge training and hub files (no layout in its options) rebuilds into the files and
bytes it had, and a new one adds its files without changing the others."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from releases.build import release_check, release_folder
from releases.models import CURRENT_LAYOUT, Release
from releases.services import release_build
from tests.conftest import Cast
from tests.releases.helpers import rjudge_gold_release

pytestmark = pytest.mark.django_db

FILES_BEFORE_LAYOUTS = [
    "README.md",
    "labels.csv",
    "manifest.json",
    "records.jsonl",
    "records.parquet",
    "rjudge.zip",
]
CARD_HEADER_BEFORE_LAYOUTS = """---
license: "CC BY-NC-SA 4.0"
pretty_name: "Agent Safety 1.0.0"
configs:
- config_name: default
  data_files: records.parquet
---
"""


@pytest.fixture
def release(cast: Cast, rjudge_dir: Path) -> Release:
    made = rjudge_gold_release(cast.project, cast.manager, rjudge_dir)
    # The card prints the day the release was made.
    Release.objects.filter(pk=made.pk).update(
        created_at=datetime.datetime(2026, 1, 2, tzinfo=datetime.UTC)
    )
    return release_build(made.pk)


def files_of(release: Release) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(release_folder(release).iterdir())}


def rebuilt(release: Release, **options: object) -> Release:
    Release.objects.filter(pk=release.pk).update(state=Release.State.PENDING, options=options)
    return release_build(release.pk)


def test_a_new_release_is_made_with_the_current_layout(release: Release) -> None:
    assert release.options["layout"] == CURRENT_LAYOUT == 2


def test_a_release_made_before_layouts_rebuilds_into_the_files_it_had(release: Release) -> None:
    before = {k: v for k, v in release.options.items() if k != "layout"}

    old = rebuilt(release, **before)
    first = files_of(old)
    again = files_of(rebuilt(release, **before))

    assert sorted(first) == FILES_BEFORE_LAYOUTS
    assert first["README.md"].decode().startswith(CARD_HEADER_BEFORE_LAYOUTS)
    assert b"## Using this release" not in first["README.md"]
    assert again == first
    assert release_check(Release.objects.get(pk=release.pk)) == []


def test_the_current_layout_only_adds_files_and_the_cards_header(release: Release) -> None:
    current = files_of(release)
    before = {k: v for k, v in release.options.items() if k != "layout"}
    old = files_of(rebuilt(release, **before))

    assert set(current) - set(old) == {
        "judge_dataset.jsonl",
        "judge_sft.jsonl",
        "judge_sft_openai.jsonl",
        "judge_task.py",
    }
    for name in ("labels.csv", "records.jsonl", "records.parquet", "rjudge.zip"):
        assert current[name] == old[name], name
    # The card's text below its header is the same, but for the files it lists and the section
    # on using them.
    old_body = old["README.md"].decode().split("---\n", 2)[2]
    current_body = current["README.md"].decode().split("---\n", 2)[2]
    usage = current_body.index("## Using this release")
    current_body = current_body[:usage] + current_body[current_body.index("## Records by") :]
    assert _without_files(current_body) == _without_files(old_body)


def _without_files(card: str) -> list[str]:
    return [line for line in card.splitlines() if not line.startswith("- Files: ")]
