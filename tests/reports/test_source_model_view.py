"""The study's view: each source model's mean safety and helpfulness by chosen score sources,
the Pareto frontier, the toolkit filter, through the API and the page."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse

from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.reports.score_study import AGENTS, SCORES, import_study, record_of
from tests.review.opinions import annotate

pytestmark = pytest.mark.django_db


def view_api(cast: Cast, status: int = 200, **query: object) -> dict:
    url = reverse("reports_api:source_models", args=[cast.project.slug])
    response = token_client(cast.reviewer).get(url, query)
    assert response.status_code == status, response.content
    return response.json()


def by_model(view: dict) -> dict[str, dict]:
    return {model["name"]: model for model in view["models"]}


def test_each_source_model_has_the_mean_scores_of_the_same_evaluator_by_default(
    cast: Cast, tmp_path: Path
) -> None:
    import_study(cast.project, cast.manager, tmp_path / "study")

    view = view_api(cast)

    assert view["safety"]["name"] == "gpt-5-mini safe"
    assert view["helpfulness"]["name"] == "gpt-5-mini help_ignore_safety"
    models = by_model(view)
    assert sorted(models) == sorted(AGENTS)
    for agent in AGENTS:
        safety = SCORES[("gpt-5-mini", "safe")][agent]
        helpfulness = SCORES[("gpt-5-mini", "help_ignore_safety")][agent]
        model = models[agent]
        assert (model["safety_n"], model["helpfulness_n"]) == (3, 3)
        assert model["safety"]["value"] == pytest.approx(np.mean(safety))
        assert model["helpfulness"]["value"] == pytest.approx(np.mean(helpfulness))
        assert model["safety"]["low"] <= model["safety"]["value"] <= model["safety"]["high"]
    # llama is less safe and less helpful than Qwen3-8B; Mistral is the most helpful.
    assert {name for name, model in models.items() if model["pareto"]} == {
        "Qwen3-8B",
        "Mistral-7B-sft",
    }


def test_another_evaluator_gives_another_view_never_an_average(cast: Cast, tmp_path: Path) -> None:
    runs = import_study(cast.project, cast.manager, tmp_path / "study")

    view = view_api(
        cast,
        safety=f"run:{runs['Qwen3-32B safe'].pk}",
        helpfulness=f"run:{runs['Qwen3-32B help_ignore_safety'].pk}",
    )

    models = by_model(view)
    for agent in AGENTS:
        assert models[agent]["safety"]["value"] == pytest.approx(
            np.mean(SCORES[("Qwen3-32B", "safe")][agent])
        )
    # No model is at least as safe and as helpful as another by this evaluator.
    assert all(model["pareto"] for model in models.values())


def test_the_toolkit_filter_keeps_the_records_of_the_cases_using_it(
    cast: Cast, tmp_path: Path
) -> None:
    import_study(cast.project, cast.manager, tmp_path / "study")

    view = view_api(cast, toolkit="Terminal")

    models = by_model(view)
    assert view["toolkit"] == "Terminal"
    assert {name: m["safety_n"] for name, m in models.items()} == dict.fromkeys(AGENTS, 1)
    assert models["Qwen3-8B"]["safety"]["value"] == 3
    assert [name for name, m in models.items() if m["pareto"]] == ["Qwen3-8B"]


def test_the_human_consensus_is_a_score_source(cast: Cast, tmp_path: Path) -> None:
    import_study(cast.project, cast.manager, tmp_path / "study")
    second = type(cast.annotator).objects.create(username="second")
    for person in (cast.annotator, second):
        annotate(record_of(cast.project, AGENTS[0], 0), person, "safe", safety=1, helpfulness=2)

    view = view_api(cast, safety="consensus", helpfulness="consensus")

    assert view["safety"] == {"key": "consensus", "name": "Human consensus"}
    (model,) = view["models"]
    assert model["name"] == AGENTS[0]
    assert (model["safety"]["value"], model["helpfulness"]["value"]) == (1, 2)
    # One record: no spread to draw an interval from, yet a well-formed one.
    assert model["safety"]["low"] == model["safety"]["high"] == 1


def test_a_source_of_the_wrong_scale_or_an_unknown_toolkit_is_refused(
    cast: Cast, tmp_path: Path
) -> None:
    runs = import_study(cast.project, cast.manager, tmp_path / "study")

    wrong = view_api(cast, 400, safety=f"run:{runs['gpt-5-mini help_ignore_safety'].pk}")
    person = view_api(cast, 400, helpfulness=f"person:{cast.annotator.pk}")
    toolkit = view_api(cast, 400, toolkit="Nothing")

    assert "safety" in wrong
    assert "helpfulness" in person
    assert toolkit == {"toolkit": ["No case of this project uses a toolkit 'Nothing'."]}


def test_the_page_draws_each_model_labelled_with_the_frontier_marked(
    cast: Cast, tmp_path: Path
) -> None:
    import_study(cast.project, cast.manager, tmp_path / "study")

    response = cast.client_for("manager").get(
        reverse("reports:source_models", args=[cast.project.slug])
    )

    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('<circle class="chart-point frontier"') == 2
    assert page.count('<circle class="chart-point"') == 1
    assert '<polyline class="chart-frontier"' in page
    for agent in AGENTS:
        assert re.search(rf'<text class="chart-label chart-point-label"[^>]*>{agent}</text>', page)
        assert f'href="/p/{cast.project.slug}/records/?agent={agent}"' in page
    assert "style=" not in page
    assert 'aria-current="page">Source models</a>' in page
    assert '<option value="Terminal">Terminal</option>' in page


def test_the_page_with_a_toolkit_shows_only_its_cases(cast: Cast, tmp_path: Path) -> None:
    import_study(cast.project, cast.manager, tmp_path / "study")

    page = (
        cast.client_for("reviewer")
        .get(reverse("reports:source_models", args=[cast.project.slug]), {"toolkit": "Terminal"})
        .content.decode()
    )

    assert page.count('<circle class="chart-point frontier"') == 1
    assert '<th scope="row">Qwen3-8B</th>\n          <td>1 / 1</td>' in page
