"""Two evaluators' 0-3 scores compared, through the API and the page, on a study imported as
its files come: the figures equal scikit-learn's, krippendorff's and scipy's."""

from __future__ import annotations

import re
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from django.urls import reverse
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.reports.score_study import AGENTS, import_study, record_of, scores
from tests.review.opinions import annotate

pytestmark = pytest.mark.django_db


def compared(cast: Cast, status: int = 200, **query: object) -> dict:
    url = reverse("reports_api:evaluators", args=[cast.project.slug])
    response = token_client(cast.reviewer).get(url, query)
    assert response.status_code == status, response.content
    return response.json()


def expected(a: list[int], b: list[int]) -> dict[str, float]:
    x, y = np.array(a), np.array(b)
    return {
        "exact": float(np.mean(x == y)),
        "kappa": cohen_kappa_score(x, y, weights="quadratic", labels=[0, 1, 2, 3]),
        "alpha": krippendorff.alpha(
            reliability_data=np.vstack([x, y]).astype(float), level_of_measurement="ordinal"
        ),
        "spearman": spearmanr(x, y).statistic,
        "mean_first": float(x.mean()),
        "mean_second": float(y.mean()),
        "mae": float(np.abs(x - y).mean()),
    }


def assert_figures(statistics: dict, a: list[int], b: list[int]) -> None:
    for name, value in expected(a, b).items():
        estimate = statistics[name]
        assert estimate["value"] == pytest.approx(value, abs=1e-12), name
        assert estimate["low"] <= estimate["value"] <= estimate["high"], name


def test_two_evaluators_safety_scores_agree_as_the_reference_libraries_say(
    cast: Cast, tmp_path: Path
) -> None:
    runs = import_study(cast.project, cast.manager, tmp_path / "study")
    first, second = runs["gpt-5-mini safe"], runs["Qwen3-32B safe"]

    report = compared(cast, scale="safety", first=f"run:{first.pk}", second=f"run:{second.pk}")

    assert (report["first"]["name"], report["second"]["name"]) == (first.name, second.name)
    a, b = scores("gpt-5-mini", "safe"), scores("Qwen3-32B", "safe")
    assert report["overall"]["n"] == 9
    assert_figures(report["overall"]["statistics"], a, b)
    table = np.zeros((4, 4), dtype=int)
    np.add.at(table, (a, b), 1)
    assert report["overall"]["table"] == table.tolist()


def test_each_source_model_case_and_toolkit_has_its_own_figures(cast: Cast, tmp_path: Path) -> None:
    runs = import_study(cast.project, cast.manager, tmp_path / "study")
    first, second = runs["gpt-5-mini help_ignore_safety"], runs["Qwen3-32B help_ignore_safety"]

    report = compared(cast, scale="helpfulness", first=f"run:{first.pk}", second=f"run:{second.pk}")

    a = scores("gpt-5-mini", "help_ignore_safety")
    b = scores("Qwen3-32B", "help_ignore_safety")
    by_source = {group["name"]: group for group in report["groups"]["source"]}
    assert sorted(by_source) == sorted(AGENTS)
    for position, agent in enumerate(AGENTS):
        lines = slice(3 * position, 3 * position + 3)
        assert by_source[agent]["n"] == 3
        assert by_source[agent]["statistics"]["mae"]["value"] == pytest.approx(
            expected(a[lines], b[lines])["mae"]
        )
    cases = [group["name"] for group in report["groups"]["case"]]
    assert cases == ["official_0", "official_1", "official_2"]
    # official_1 uses two toolkits: its records count in both.
    toolkits = {group["name"]: group["n"] for group in report["groups"]["toolkit"]}
    assert toolkits == {"BankManager": 3, "Gmail": 3, "GoogleHome": 3, "Terminal": 3}
    case_1 = [a[3 * i + 1] for i in range(3)], [b[3 * i + 1] for i in range(3)]
    gmail = next(g for g in report["groups"]["toolkit"] if g["name"] == "Gmail")
    assert gmail["statistics"]["exact"]["value"] == pytest.approx(expected(*case_1)["exact"])


def test_a_judge_against_the_human_consensus_has_its_mean_absolute_error(
    cast: Cast, tmp_path: Path
) -> None:
    runs = import_study(cast.project, cast.manager, tmp_path / "study")
    second_annotator = type(cast.annotator).objects.create(username="second")
    people = {0: [3, 3], 1: [1, 2], 2: [0, 0]}  # case 1: no majority, so no consensus
    for agent in AGENTS:
        for line, given in people.items():
            for person, score in zip((cast.annotator, second_annotator), given, strict=True):
                annotate(record_of(cast.project, agent, line), person, "safe", safety=score)
    run = runs["gpt-5-mini safe"]

    report = compared(cast, scale="safety", first=f"run:{run.pk}", second="consensus")

    judge = scores("gpt-5-mini", "safe")
    kept = [i for i in range(9) if i % 3 != 1]
    consensus = [people[i % 3][0] for i in kept]
    assert report["second"] == {"key": "consensus", "name": "Human consensus"}
    assert report["overall"]["n"] == 6
    assert_figures(report["overall"]["statistics"], [judge[i] for i in kept], consensus)


def test_one_annotator_can_be_compared_with_a_run(cast: Cast, tmp_path: Path) -> None:
    runs = import_study(cast.project, cast.manager, tmp_path / "study")
    annotate(record_of(cast.project, AGENTS[0], 0), cast.annotator, "safe", safety=1)

    report = compared(
        cast,
        scale="safety",
        first=f"person:{cast.annotator.pk}",
        second=f"run:{runs['Qwen3-32B safe'].pk}",
    )

    assert report["first"]["name"] == "annotator"
    assert report["overall"]["n"] == 1
    assert report["overall"]["table"][1][2] == 1


def test_without_a_choice_the_two_latest_runs_of_the_scale_are_compared(
    cast: Cast, tmp_path: Path
) -> None:
    import_study(cast.project, cast.manager, tmp_path / "study")

    report = compared(cast, scale="safety")

    assert (report["first"]["name"], report["second"]["name"]) == (
        "gpt-5-mini safe",
        "Qwen3-32B safe",
    )


def test_a_run_of_the_other_scale_or_of_another_project_is_refused(
    cast: Cast, tmp_path: Path
) -> None:
    runs = import_study(cast.project, cast.manager, tmp_path / "study")

    wrong_scale = compared(
        cast, 400, scale="safety", first=f"run:{runs['gpt-5-mini help_ignore_safety'].pk}"
    )
    unknown = compared(cast, 400, scale="helpfulness", second="run:999999")
    nonsense = compared(cast, 400, second="everyone")

    assert "gives safety scores" in wrong_scale["first"][0]
    assert "second" in unknown
    assert "second" in nonsense


def test_the_page_shows_the_figures_and_the_heat_map_of_score_against_score(
    cast: Cast, tmp_path: Path
) -> None:
    runs = import_study(cast.project, cast.manager, tmp_path / "study")
    query = {
        "scale": "safety",
        "first": f"run:{runs['gpt-5-mini safe'].pk}",
        "second": f"run:{runs['Qwen3-32B safe'].pk}",
    }

    response = cast.client_for("manager").get(
        reverse("reports:evaluators", args=[cast.project.slug]), query
    )

    assert response.status_code == 200
    page = response.content.decode()
    kappa = expected(scores("gpt-5-mini", "safe"), scores("Qwen3-32B", "safe"))["kappa"]
    assert "Cohen&#x27;s kappa (quadratic weights)</th><td>" + f"{kappa:.3f}" in page
    assert "Safety scores: gpt-5-mini safe against Qwen3-32B safe" in page
    assert page.count('class="chart-cell shade-') == 16
    assert "Rows: Score by gpt-5-mini safe (the first). Columns: Score by Qwen3-32B safe" in page
    assert '<th scope="row">Mistral-7B-sft</th>' in page
    assert 'aria-current="page">Evaluators</a>' in page


def test_the_per_case_table_prints_a_degenerate_interval_as_the_value_alone(
    cast: Cast, tmp_path: Path
) -> None:
    runs = import_study(cast.project, cast.manager, tmp_path / "study")
    query = {
        "scale": "safety",
        "first": f"run:{runs['gpt-5-mini safe'].pk}",
        "second": f"run:{runs['Qwen3-32B safe'].pk}",
    }

    page = cast.client_for("reviewer").get(
        reverse("reports:evaluators", args=[cast.project.slug]), query
    )

    page_text = page.content.decode()
    # Both evaluators give official_2 the same scores: every resample agrees exactly.
    assert cells(page_text, "official_2")[:5] == ["3", "1.000", "1.000", "1.000", "1.000"]
    # Mistral's scores run against each other: a range of negative numbers, said plainly.
    spearman = cells(page_text, "Mistral-7B-sft")[4]
    assert spearman == '-0.500 <span class="muted interval">(-1.00 to -0.50)</span>'


def cells(page: str, row: str) -> list[str]:
    """The cells of the row headed `row`, as printed."""
    found = re.search(rf'<th scope="row">{re.escape(row)}</th>(.*?)</tr>', page, re.S)
    assert found is not None, row
    return [cell.strip() for cell in re.findall(r"<td>(.*?)</td>", found.group(1), re.S)]


def test_the_page_refuses_a_source_it_does_not_offer(cast: Cast) -> None:
    response = cast.client_for("reviewer").get(
        reverse("reports:evaluators", args=[cast.project.slug]), {"first": "run:12345"}
    )

    assert response.status_code == 400
    assert "Select a valid choice. run:12345 is not one of the available choices." in (
        response.content.decode()
    )
