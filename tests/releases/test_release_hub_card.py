"""A release folder is ready for the Hugging Face Hub: its card's header is what the Hub reads
(license, configs, task categories, size), `huggingface_hub` parses it, and `datasets` loads
every config it names from the folder as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from curation.services.imports import import_path
from releases.build import release_folder
from releases.models import LabelBasis, Release
from releases.services import release_build, release_create, release_options
from tests.conftest import Cast
from tests.curation.toolemu_files import CASES
from tests.releases.helpers import rjudge_gold_release
from tests.releases.test_release_toolemu_scores import scored_release
from tests.releases.toolemu_study import import_scored_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    return tmp_path / "cache"


def card_of(release: Release) -> Any:
    from huggingface_hub import DatasetCard

    return DatasetCard((release_folder(release) / "README.md").read_text())


def loaded_configs(release: Release, cache: Path) -> dict[str, Any]:
    """Each config the card names, loaded by `datasets` from the release folder."""
    import datasets

    return {
        config["config_name"]: datasets.load_dataset(
            str(release_folder(release)),
            config["config_name"],
            split="train",
            cache_dir=str(cache),
        )
        for config in card_of(release).data.configs
    }


def test_a_release_of_rjudge_loads_by_config_from_its_folder(
    cast: Cast, rjudge_dir: Path, offline: Path
) -> None:
    made = rjudge_gold_release(cast.project, cast.manager, rjudge_dir)
    release = release_build(made.pk)

    card = card_of(release)
    assert card.data.license == "cc-by-nc-sa-4.0"
    assert card.data.pretty_name == "Agent Safety 1.0.0"
    assert card.data.task_categories == ["text-classification"]
    assert card.data.size_categories == ["n<1K"]
    assert "## License\n\nCC BY-NC-SA 4.0" in card.text
    loaded = loaded_configs(release, offline)
    assert {name: table.num_rows for name, table in loaded.items()} == {
        "default": 571,
        "judge_dataset": 571,
        "judge_sft": 571,
        "judge_sft_openai": 571,
    }
    assert loaded["default"].column_names[:3] == ["id", "category", "scenario"]
    assert loaded["judge_sft"][0]["messages"][-1]["role"] == "assistant"


def test_a_toolemu_study_loads_with_its_cases_and_pairs(
    cast: Cast, tmp_path: Path, offline: Path
) -> None:
    runs = import_scored_study(cast.project, cast.manager, tmp_path / "study")
    release = scored_release(cast, runs, "Qwen3-32B", pairs_by="safety")

    loaded = loaded_configs(release, offline)

    # Released for their scores alone, the trajectories have no label to judge or to learn.
    assert not (release_folder(release) / "judge_task.py").exists()
    assert sorted(loaded) == [
        "default",
        "dpo_pairs",
        "dpo_pairs_conversational",
        "toolemu_cases",
    ]
    cases = loaded["toolemu_cases"]
    assert cases.num_rows == len(CASES)
    first = cases[0]
    assert (first["id"], first["input"]) == ("official_0", CASES[0]["User Instruction"])
    assert first["target"] == CASES[0]["Expected Achievements"]
    assert first["metadata"]["Toolkits"] == [
        {
            "name": "Terminal",
            "description": "Runs commands in the user's shell.",
            "tools": [
                {"name": "TerminalExecute", "summary": "Run a shell command and return its output."}
            ],
        }
    ]
    assert first["metadata"]["Underspecifications"] == CASES[0]["Underspecifications"]


def test_inspect_reads_the_toolemu_cases_as_its_samples(cast: Cast, tmp_path: Path) -> None:
    from inspect_ai.dataset import json_dataset

    runs = import_scored_study(cast.project, cast.manager, tmp_path / "study")
    release = scored_release(cast, runs, "Qwen3-32B", pairs_by="safety")

    samples = json_dataset(str(release_folder(release) / "toolemu_cases.jsonl"))

    assert [sample.id for sample in samples] == [case["name"] for case in CASES]
    assert [sample.input for sample in samples] == [case["User Instruction"] for case in CASES]
    assert samples[0].metadata is not None
    assert samples[0].metadata["Potential Risky Actions"] == CASES[0]["Potential Risky Actions"]


def test_a_license_the_hub_does_not_name_is_other_with_its_name(
    cast: Cast, rjudge_dir: Path
) -> None:
    import_path(actor=cast.manager, project=cast.project, path=rjudge_dir / "Finance")
    made = release_create(
        actor=cast.manager,
        project=cast.project,
        version="1.0.0",
        license='Research use only: "ask first"',
        label_basis=LabelBasis.GOLD,
        options=release_options(leave_out_in_annotation=False),
    )

    card = card_of(release_build(made.pk))

    assert card.data.license == "other"
    assert card.data.license_name == "research-use-only-ask-first"
    assert '## License\n\nResearch use only: "ask first"' in card.text
