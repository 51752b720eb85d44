"""Scores far apart are settled as a score: on the settle page, by keyboard too, and releases
take the settled score as the record's human score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from curation.models import Record
from releases.build import release_folder
from releases.models import LabelBasis
from releases.services import release_options
from review.models import Adjudication, Disagreement, ScoreAdjudication
from tests.conftest import Cast
from tests.releases.helpers import built_release
from tests.releases.toolemu_study import import_scored_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def apart(cast: Cast, tmp_path: Path) -> Record:
    """A trajectory whose two evaluators' safety scores are 2 or more apart."""
    import_scored_study(cast.project, cast.manager, tmp_path / "study")
    gap = Disagreement.objects.filter(
        project=cast.project, kind=Disagreement.Kind.SCORE_GAP, state=Disagreement.State.OPEN
    ).first()
    assert gap is not None
    return gap.record


def settle_url(cast: Cast, record: Record) -> str:
    return reverse("review:adjudication_record", args=[cast.project.slug, record.pk])


def disputed(record: Record) -> set[str]:
    gap = record.disagreements.get(kind=Disagreement.Kind.SCORE_GAP)
    return {entry["scale"] for entry in gap.labels}


def test_the_settle_page_offers_the_disputed_scales_in_their_own_words(
    cast: Cast, apart: Record
) -> None:
    page = cast.client_for("reviewer").get(settle_url(cast, apart)).content.decode()

    for scale in disputed(apart):
        assert f"Settled {scale} score" in page
        # Who said what, one scale at a time: never safety and helpfulness in one list.
        assert f'<span class="said-scale">{scale.capitalize()}:</span>' in page
    if "safety" in disputed(apart):
        assert "0: Likely Severe Risk" in page and "3: Certain No Risk" in page
    if "helpfulness" in disputed(apart):
        assert "0: Poor" in page and "3: Excellent" in page


def test_a_score_gap_is_settled_with_a_score_and_no_label(cast: Cast, apart: Record) -> None:
    scale = sorted(disputed(apart))[0]

    response = cast.client_for("reviewer").post(
        settle_url(cast, apart), {f"{scale}_score": "1", "reason": "The agent asked first."}
    )

    assert response.status_code == 302
    settled = ScoreAdjudication.objects.get(record=apart)
    assert (settled.scale, settled.score, settled.reviewer) == (scale, 1, cast.reviewer)
    assert apart.disagreements.get(kind=Disagreement.Kind.SCORE_GAP).state == "resolved"
    assert not Adjudication.objects.filter(record=apart).exists()
    record_page = cast.client_for("reviewer").get(
        reverse("hub:record_detail", args=[cast.project.slug, apart.pk])
    )
    assert f"<dt>Settled {scale} score</dt>" in record_page.content.decode()


def test_settling_nothing_is_refused_with_what_to_choose(cast: Cast, apart: Record) -> None:
    response = cast.client_for("reviewer").post(settle_url(cast, apart), {"reason": "Hm."})

    assert response.status_code == 200
    assert "Choose the final label, a settled score, or both." in response.content.decode()
    assert not ScoreAdjudication.objects.exists()


def test_a_final_label_alone_leaves_the_scores_disagreement_open(cast: Cast, apart: Record) -> None:
    response = cast.client_for("reviewer").post(
        settle_url(cast, apart), {"label": "unsafe", "reason": "It deleted files."}
    )

    assert response.status_code == 302
    assert apart.disagreements.get(kind=Disagreement.Kind.SCORE_GAP).state == "open"


def test_a_release_of_human_scores_takes_the_settled_score(cast: Cast, apart: Record) -> None:
    scale = sorted(disputed(apart))[0]
    client = cast.client_for("reviewer")
    client.post(settle_url(cast, apart), {f"{scale}_score": "3", "reason": "First look."})
    client.post(settle_url(cast, apart), {f"{scale}_score": "2", "reason": "On reflection."})

    release = built_release(
        cast.project,
        cast.manager,
        label_basis=LabelBasis.SCORES,
        options=release_options(leave_out_in_annotation=False),
    )

    lines = (release_folder(release) / "records.jsonl").read_text().splitlines()
    rows = {row["id"]: row for row in map(json.loads, lines)}
    assert rows[apart.external_id][f"{scale}_score"] == 2
    assert release.summary["records"] == 1


def test_the_evaluators_report_reads_the_settled_score_as_the_peoples(
    cast: Cast, apart: Record
) -> None:
    scale = sorted(disputed(apart))[0]
    cast.client_for("reviewer").post(
        settle_url(cast, apart), {f"{scale}_score": "2", "reason": "Settled."}
    )
    metric = {"safety": " safe", "helpfulness": " help_ignore_safety"}[scale]
    run = apart.verdicts.filter(score__isnull=False, run__name__endswith=metric).first()
    assert run is not None

    report = cast.client_for("reviewer").get(
        reverse("reports_api:evaluators", args=[cast.project.slug]),
        {"scale": scale, "first": f"run:{run.run_id}", "second": "consensus"},
    )

    assert report.status_code == 200, report.content
    overall = report.json()["overall"]
    assert overall["n"] == 1
    assert overall["statistics"]["mean_second"]["value"] == 2
