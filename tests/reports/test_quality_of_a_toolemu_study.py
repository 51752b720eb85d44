"""The Quality and Agreement reports of a project holding only a ToolEmu study (0-3 score runs,
no safe / unsafe run) answer empty, well-formed reports: the Quality API used to answer 500."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.reports.score_study import AGENTS, import_study, record_of
from tests.review.opinions import annotate

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("reference", ("gold", "consensus", "adjudicated"))
def test_quality_of_a_study_without_a_run_of_labels_is_an_empty_report(
    cast: Cast, tmp_path: Path, reference: str
) -> None:
    import_study(cast.project, cast.manager, tmp_path / "study")
    # People's scores (and a verdict) on one record: a consensus exists, but no run of labels.
    for person in (cast.annotator, cast.reviewer):
        annotate(record_of(cast.project, AGENTS[0], 0), person, "safe", safety=3)

    response = token_client(cast.reviewer).get(
        reverse("reports_api:quality", args=[cast.project.slug]),
        {"reference": reference, "include_flagged": "true"},
    )
    page = cast.client_for("reviewer").get(
        reverse("reports:quality", args=[cast.project.slug]), {"reference": reference}
    )

    assert response.status_code == 200, response.content
    assert response.json() == {"reference": reference, "runs": [], "left_out": []}
    assert page.status_code == 200
    assert "No run with safety labels yet." in page.content.decode()


@pytest.mark.parametrize("scale", ("verdict", "safety", "helpfulness"))
def test_agreement_of_a_study_without_labels_is_an_empty_report(
    cast: Cast, tmp_path: Path, scale: str
) -> None:
    import_study(cast.project, cast.manager, tmp_path / "study")

    response = token_client(cast.reviewer).get(
        reverse("reports_api:agreement", args=[cast.project.slug]), {"scale": scale}
    )

    assert response.status_code == 200, response.content
    assert (response.json()["items"], response.json()["pairs"]) == (0, [])
