"""A statistic that a page prints twice has one interval: with two annotators, the percent
agreement of all the labels is their pair's, and the agreement page says so once."""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.urls import reverse

from reports.agreement import agreement_report
from tests.conftest import Cast
from tests.factories import RecordFactory, UserFactory
from tests.review.opinions import annotate

pytestmark = pytest.mark.django_db

VERDICTS = ("safe", "unsafe", "unsure")


@pytest.fixture
def two_annotators(cast: Cast) -> None:
    """ann and bob label the same 57 records, agreeing about three times in four."""
    rng = np.random.default_rng(2)
    first = rng.integers(0, 3, 57)
    second = np.where(rng.random(57) < 0.7, first, rng.integers(0, 3, 57))
    people = [UserFactory(username=name) for name in ("ann", "bob")]
    for a, b in zip(first.tolist(), second.tolist(), strict=True):
        record = RecordFactory(project=cast.project, searchable=False)
        annotate(record, people[0], VERDICTS[a])
        annotate(record, people[1], VERDICTS[b])


def cell(page: str, table: str, row: str, column: int) -> str:
    """A cell of the table of class `table`, as printed."""
    _, _, rest = page.partition(f'<table class="data {table}">')
    found = re.search(rf'<th scope="row">{re.escape(row)}</th>(.*?)</tr>', rest, re.S)
    assert found is not None, row
    return re.findall(r"<td>(.*?)</td>", found.group(1), re.S)[column].strip()


def test_the_percent_agreement_of_two_annotators_has_one_interval(
    cast: Cast, two_annotators
) -> None:
    report = agreement_report(cast.project, scale="verdict")

    assert report.overall["percent"] == report.pairs[0].agreement


def test_the_page_prints_it_with_the_same_interval_overall_and_for_the_pair(
    cast: Cast, two_annotators
) -> None:
    page = cast.client_for("reviewer").get(reverse("reports:agreement", args=[cast.project.slug]))

    text = page.content.decode()
    overall = cell(text, "agreement-overall", "Percent agreement", 0)
    assert "interval" in overall
    assert cell(text, "agreement-pairs", "ann &amp; bob", 1) == overall
