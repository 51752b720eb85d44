"""ToolEmu preference pairs in TRL's conversational format, and the score source chosen on the
release form and in the API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from releases.build import release_folder
from releases.models import Release
from releases.services import release_build
from tests.conftest import Cast
from tests.curation.toolemu_files import CALLS, CASES
from tests.releases.test_release_toolemu_scores import lines, scored_release
from tests.releases.toolemu_study import AGENTS, import_scored_study

pytestmark = pytest.mark.django_db

TRL = "dpo_pairs_conversational.jsonl"


@pytest.fixture
def runs(cast: Cast, tmp_path: Path):
    return import_scored_study(cast.project, cast.manager, tmp_path / "study")


def messages_of(agent: str, case: str) -> list[dict[str, str]]:
    """A fixture trajectory's messages, written from the format's rules: each step's log without
    its <think> blocks, the first without its "Thought:", later ones starting with one, and each
    observation after its call."""
    logs = [(log, observation) for _, _, log, observation, _, _ in CALLS[case]]
    output = f"{agent} finished {case}: done as asked."
    steps = [*logs, (f"<think>Wrap up.</think>Final Answer: {output}", None)]
    messages = []
    for number, (log, observation) in enumerate(steps):
        text = log.replace(
            "<think>The user wants space. I should look before deleting.</think>", ""
        )
        text = text.replace("<think>All devices means all.</think>", "")
        text = text.replace("<think>Wrap up.</think>", "").lstrip()
        if number == 0:
            text = text.removeprefix("Thought:").lstrip()
        elif not text.startswith("Thought:"):
            text = "Thought: " + text
        messages.append({"role": "assistant", "content": text})
        if observation is not None:
            messages.append({"role": "user", "content": f"Observation: {observation}"})
    return messages


def test_the_trl_file_loads_and_has_the_documented_shape(
    cast: Cast, runs, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    release = scored_release(cast, runs, "Qwen3-32B", pairs_by="safety")
    loaded = datasets.load_dataset(
        "json",
        data_files=str(release_folder(release) / TRL),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )

    assert loaded.num_rows == len(lines(release, "dpo_pairs.jsonl"))
    # Qwen3-32B scored the third agent 3 and the first 0 for safety on case 1 (official_1).
    (row,) = [
        r
        for r in loaded
        if (r["case_idx"], r["chosen_model"], r["rejected_model"]) == (1, AGENTS[2], AGENTS[0])
    ]
    system, user = row["prompt"]
    assert system["role"] == "system" and "helpful AI Agent" in system["content"]
    assert user["role"] == "user"
    assert (
        "<GoogleHome>: Controls the user's smart home devices.\nTool APIs:\n"
        "\t* GoogleHomeListDevices: List the <b>devices</b> of the home\n"
        "\t* GoogleHomeTurnOff: Switch a device off\n<Gmail>"
    ) in user["content"]
    assert "[GoogleHomeListDevices, GoogleHomeTurnOff, Gmail]" in user["content"]
    assert user["content"].endswith(f"User Input: {CASES[1]['User Instruction']}\nThought: ")
    assert row["chosen"] == messages_of(AGENTS[2], "official_1")
    assert row["rejected"] == messages_of(AGENTS[0], "official_1")
    assert (row["chosen_score"], row["rejected_score"], row["score_difference"]) == (3, 0, 3)
    assert isinstance(row["chosen_score"], int)
    assert row["provenance"]["scores"]["safety"]["run"] == "Qwen3-32B safe"
    text = json.dumps([row["chosen"], row["rejected"]])
    assert "<think>" not in text and "</think>" not in text


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_api_takes_a_run_as_score_source_and_says_it(cast: Cast, runs) -> None:
    url = reverse("releases_api:release_list", args=[cast.project.slug])
    safety = runs[("gpt-5-mini", "safety")]

    response = api(cast.manager).post(
        url,
        {
            "version": "1.0.0",
            "license": "MIT",
            "label_basis": "scores",
            "safety_scores": str(safety.pk),
            # Helpfulness from people, who have scored nothing yet: every trajectory goes in.
            "leave_out_in_annotation": False,
        },
        format="json",
    )

    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["options"]["scores"] == {
        "safety": {
            "source": "run",
            "run_id": safety.pk,
            "run": "gpt-5-mini safe",
            "model": "gpt-5-mini",
            "metric": "safe",
        },
        "helpfulness": {"source": "human"},
    }
    assert body["summary"]["scored"] == {"safety": 9, "helpfulness": 0}
    release_build(body["id"])
    rows = lines(Release.objects.get(pk=body["id"]), "dpo_pairs.jsonl")
    assert rows and all(
        row["provenance"]["scores"]["safety"]["run"] == "gpt-5-mini safe" for row in rows
    )


@pytest.mark.parametrize(
    "chosen",
    ["helpfulness run", "12345678", "Qwen3-32B safe", "average"],
    ids=["other-scale", "no-such-run", "a-name", "average"],
)
def test_the_api_refuses_a_source_that_is_not_a_run_of_that_scale(
    cast: Cast, runs, chosen: str
) -> None:
    if chosen == "helpfulness run":
        chosen = str(runs[("Qwen3-32B", "helpfulness")].pk)
    url = reverse("releases_api:release_list", args=[cast.project.slug])

    response = api(cast.manager).post(
        url, {"version": "1.0.0", "license": "MIT", "safety_scores": chosen}, format="json"
    )

    assert response.status_code == 400
    assert "safety" in json.dumps(response.json())
    assert not Release.objects.exists()


def test_the_form_offers_the_runs_and_the_page_shows_the_chosen_source(cast: Cast, runs) -> None:
    client = cast.client_for("manager")
    url = reverse("releases:release_new", args=[cast.project.slug])
    safety = runs[("Qwen3-32B", "safety")]
    helpfulness = runs[("gpt-5-mini", "helpfulness")]

    form = client.get(url).content.decode()
    assert f'value="{safety.pk}"' in form and "Run “Qwen3-32B safe” (Qwen3-32B, safe)" in form
    # A helpfulness run is offered for helpfulness alone.
    assert form.count(f'value="{helpfulness.pk}"') == 1

    response = client.post(
        url,
        {
            "version": "1.0.0",
            "license": "CC BY 4.0",
            "label_basis": "scores",
            "safety_scores": str(safety.pk),
            "helpfulness_scores": str(helpfulness.pk),
            "pairs_by": "safety",
            "min_gap": "2",
            "min_chosen": "2",
        },
    )

    release = Release.objects.get(project=cast.project)
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "From run “Qwen3-32B safe” (Qwen3-32B, safe)" in page
    assert "From run “gpt-5-mini help_ignore_safety” (gpt-5-mini, help_ignore_safety)" in page
    assert release.options["scores"]["helpfulness"]["run_id"] == helpfulness.pk
