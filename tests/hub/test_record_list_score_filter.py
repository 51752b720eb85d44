"""The record list finds the trajectories a run scored so: "gpt-5-mini safety 0"."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from curation.models import Record
from tests.conftest import Cast
from tests.releases.toolemu_study import AGENTS, SCORES, import_scored_study

pytestmark = pytest.mark.django_db


def scored(evaluator: str, scale: str, score: int) -> set[tuple[str, int]]:
    """(agent, case index) of the trajectories the evaluator gave this score on this scale."""
    return {
        (agent, case)
        for agent in AGENTS
        for case, given in enumerate(SCORES[(evaluator, scale)][agent])
        if given == score
    }


@pytest.mark.parametrize("score", range(4))
def test_the_list_and_the_api_filter_a_runs_records_by_the_score_it_gave(
    cast: Cast, tmp_path: Path, score: int
) -> None:
    runs = import_scored_study(cast.project, cast.manager, tmp_path / "study")
    run = runs[("gpt-5-mini", "safety")]
    query = {"run": run.pk, "verdict": f"score:{score}"}

    page = cast.client_for("reviewer").get(
        reverse("hub:record_list", args=[cast.project.slug]), query
    )
    api = cast.client_for("reviewer").get(
        reverse("hub_api:record_list", args=[cast.project.slug]), query
    )

    assert page.status_code == api.status_code == 200
    listed = Record.objects.filter(pk__in=[row["id"] for row in page.context["records"]])
    found = set(listed.values_list("source_agent", "source_case_index"))
    assert found == scored("gpt-5-mini", "safety", score)
    assert {row["id"] for row in api.json()["results"]} == set(listed.values_list("pk", flat=True))
    assert f'<option value="score:{score}" selected>Score {score}</option>' in page.content.decode()
