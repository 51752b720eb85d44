"""Agreement between annotators from the database: the statistics agree with reference
implementations, pairs and each annotator against the consensus, the page's charts and the API."""

from __future__ import annotations

import itertools

import krippendorff
import numpy as np
import pytest
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from reports.agreement import agreement_report
from stats import metrics
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import RecordFactory, UserFactory
from tests.review.opinions import annotate

NAMES = ("ann", "bob", "cyd")
RECORDS = 40
VERDICTS = ("safe", "unsafe", "unsure")


@pytest.fixture
def labelled(cast: Cast) -> np.ndarray:
    """Three annotators label every one of 40 records, right 75% of the time: their codes,
    annotators by records, and the 0-3 safety score each gave."""
    rng = np.random.default_rng(11)
    truth = rng.integers(0, 2, RECORDS)
    codes = np.where(rng.random((3, RECORDS)) < 0.75, truth, rng.integers(0, 3, (3, RECORDS)))
    people = [UserFactory(username=name) for name in NAMES]
    for column in range(RECORDS):
        record = RecordFactory(project=cast.project, searchable=False)
        for person, code in zip(people, codes[:, column].tolist(), strict=True):
            annotate(record, person, VERDICTS[code], safety=3 - code if code < 2 else 1)
    return codes


def test_the_statistics_agree_with_reference_implementations(cast: Cast, labelled) -> None:
    report = agreement_report(cast.project, scale="verdict", resamples=200)

    table, _ = aggregate_raters(labelled.T, n_cat=3)
    alpha = krippendorff.alpha(
        reliability_data=labelled, level_of_measurement="nominal", value_domain=[0, 1, 2]
    )
    assert (report.items, report.annotators) == (RECORDS, 3)
    assert report.overall["fleiss"].value == pytest.approx(fleiss_kappa(table), abs=1e-12)
    assert report.overall["krippendorff"].value == pytest.approx(alpha, abs=1e-9)
    pairs = [(a == b).mean() for a, b in itertools.combinations(labelled, 2)]
    assert report.overall["percent"].value == pytest.approx(np.mean(pairs))
    assert -1 <= report.overall["gwet"].value <= 1
    for estimate in report.overall.values():
        assert estimate.low <= estimate.value <= estimate.high


def test_each_pair_of_annotators_has_its_cohens_kappa(cast: Cast, labelled) -> None:
    report = agreement_report(cast.project, scale="verdict", resamples=200)

    found = {(pair.first, pair.second): pair for pair in report.pairs}
    assert set(found) == {("ann", "bob"), ("ann", "cyd"), ("bob", "cyd")}
    for (first, second), pair in found.items():
        a, b = labelled[NAMES.index(first)], labelled[NAMES.index(second)]
        assert pair.n == RECORDS
        assert pair.kappa.value == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
        assert pair.agreement.value == pytest.approx((a == b).mean())
        assert pair.kappa.low <= pair.kappa.value <= pair.kappa.high


def test_each_annotator_is_compared_with_the_consensus(cast: Cast, labelled) -> None:
    report = agreement_report(cast.project, scale="verdict", resamples=0)

    # The project asks k = 2 labels: a strict majority of the three, never "unsure".
    counts = np.stack([(labelled == code).sum(axis=0) for code in range(3)], axis=1)
    consensus = metrics.majority(counts, minimum=2, abstain=metrics.UNSURE)
    has = consensus != metrics.MISSING
    assert [person.first for person in report.with_consensus] == list(NAMES)
    for person in report.with_consensus:
        mine = labelled[NAMES.index(person.first)]
        assert person.second == "consensus"
        assert person.n == has.sum()
        expected = cohen_kappa_score(mine[has], consensus[has], labels=[0, 1, 2])
        assert person.kappa.value == pytest.approx(expected, abs=1e-12)
        assert person.kappa.has_interval is False


def test_scores_are_measured_on_an_ordinal_scale(cast: Cast, labelled) -> None:
    report = agreement_report(cast.project, scale="safety", resamples=0)

    scores = np.where(labelled < 2, 3 - labelled, 1)
    alpha = krippendorff.alpha(
        reliability_data=scores, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3]
    )
    assert report.overall["krippendorff"].value == pytest.approx(alpha, abs=1e-9)


def test_the_page_draws_the_statistics_pairs_and_annotators_as_charts(cast: Cast, labelled) -> None:
    url = reverse("reports:agreement", args=[cast.project.slug])

    page = cast.client_for("reviewer").get(url).content.decode()

    assert "40 records with two labels or more, from 3 annotators." in page
    assert '<svg class="chart-svg"' in page
    for title in (
        "Agreement (95% interval)",
        "Cohen&#x27;s kappa, pairs sharing the most records",
        "Cohen&#x27;s kappa of each annotator with the consensus",
    ):
        assert f'aria-label="{title}"' in page
    assert "ann &amp; bob" in page
    assert "Gwet&#x27;s AC1" in page
    scores = cast.client_for("manager").get(url, {"scale": "helpfulness"}).content.decode()
    assert "0 records with two labels or more" in scores


def test_the_api_gives_the_same_report_to_reviewers_only(cast: Cast, labelled) -> None:
    url = reverse("reports_api:agreement", args=[cast.project.slug])

    response = token_client(cast.reviewer).get(url, {"scale": "verdict"})

    assert response.status_code == 200
    body = response.json()
    report = agreement_report(cast.project, scale="verdict")
    assert body["overall"]["fleiss"]["value"] == pytest.approx(report.overall["fleiss"].value)
    assert body["overall"]["fleiss"]["low"] == pytest.approx(report.overall["fleiss"].low)
    assert [(p["first"], p["second"]) for p in body["pairs"]] == [
        (p.first, p.second) for p in report.pairs
    ]
    assert {p["second"] for p in body["with_consensus"]} == {"consensus"}
    assert token_client(cast.annotator).get(url).status_code == 403
    assert token_client(cast.reviewer).get(url, {"scale": "mood"}).status_code == 400
