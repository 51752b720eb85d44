"""The files of a release as their users meet them: Parquet through `datasets`, the manifest, the
dataset card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from releases.build import release_check, release_folder
from tests.conftest import Cast
from tests.releases.helpers import annotators, built_release, label, record

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(cast: Cast):
    cast.project.overlap = 1
    cast.project.save()
    (annotator,) = annotators(cast.project, 1)
    for number in range(1, 4):
        label(
            record(cast.project, number, user=f"<script>alert({number})</script> tidy up"),
            annotator,
            "unsafe" if number % 2 else "safe",
            safety=number % 4,
            risk_description="Deletes mail." if number % 2 else "",
        )
    return built_release(
        cast.project, cast.manager, options={"annotator_labels": True, "verdicts": True}
    )


def test_datasets_loads_the_parquet_file_as_it_is(release, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    loaded = datasets.load_dataset(
        "parquet",
        data_files=str(release_folder(release) / "records.parquet"),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )

    assert loaded.num_rows == 3
    assert loaded.column_names == [
        "id",
        "category",
        "scenario",
        "attack_type",
        "source_format",
        "task_id",
        "profile",
        "goal",
        "source",
        "test_case",
        "turns",
        "label",
        "label_source",
        "risk_description",
        "safety_score",
        "helpfulness_score",
        "annotator_labels",
        "verdicts",
    ]
    first = loaded[0]
    assert (first["id"], first["label"], first["risk_description"]) == (
        "1",
        "unsafe",
        "Deletes mail.",
    )
    assert first["turns"][0] == {
        "round": 0,
        "role": "user",
        "content": "<script>alert(1)</script> tidy up",
        "thought": None,
        "action": None,
        "tool": None,
        "notes": None,
    }
    assert first["test_case"] is None
    assert first["annotator_labels"] == [
        {
            "annotator": "annotator_1",
            "verdict": "unsafe",
            "safety_score": 1,
            "helpfulness_score": None,
        }
    ]
    assert loaded["label"] == ["unsafe", "safe", "unsafe"]


def test_the_manifest_lists_every_file_with_its_size_and_hash(release) -> None:
    folder = release_folder(release)
    manifest = json.loads((folder / "manifest.json").read_text())
    names = sorted(path.name for path in folder.iterdir() if path.name != "manifest.json")
    assert [entry["name"] for entry in manifest["files"]] == names
    for entry in manifest["files"]:
        assert entry["size"] == (folder / entry["name"]).stat().st_size
        assert len(entry["sha256"]) == 64
    assert release_check(release) == []


def test_tampering_with_a_file_is_caught(release) -> None:
    folder = release_folder(release)
    jsonl = folder / "records.jsonl"
    jsonl.write_bytes(jsonl.read_bytes().replace(b'"unsafe"', b'"safe"', 1))
    (folder / "extra.txt").write_text("slipped in")
    (folder / "labels.csv").unlink()

    assert release_check(release) == [
        "labels.csv is missing.",
        "records.jsonl does not match its size and SHA-256 in the manifest.",
        "extra.txt is not in the manifest.",
    ]


def test_a_changed_manifest_is_caught_too(release) -> None:
    folder = release_folder(release)
    manifest = json.loads((folder / "manifest.json").read_text())
    jsonl = folder / "records.jsonl"
    jsonl.write_text("{}\n")
    # Whoever edits a file and its entry in the manifest is still found out: the manifest the
    # database recorded at build time is the reference.
    for entry in manifest["files"]:
        if entry["name"] == "records.jsonl":
            entry["size"] = 3
    (folder / "manifest.json").write_text(json.dumps(manifest))

    problems = release_check(release)
    assert problems[0] == "manifest.json differs from the manifest recorded when it was built."
    assert "records.jsonl does not match its size and SHA-256 in the manifest." in problems


def test_the_card_counts_labels_and_names_the_license(release) -> None:
    card = (release_folder(release) / "README.md").read_text()
    # In the header as the Hugging Face Hub names it, in the text as the manager wrote it.
    assert card.startswith("---\nlicense: cc-by-4.0\n")
    assert "## License\n\nCC BY 4.0\n" in card
    assert "| Application | 1 | 2 | 3 |" in card
    assert "| **All** | 1 | 2 | 3 |" in card
    assert "The first release." in card
