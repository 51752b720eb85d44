"""The agreement charts print what the table prints: a kappa worse than chance is a bar left of
zero with its negative value, and a statistic undefined for the labels is "-", never 0.000."""

from __future__ import annotations

import re

from django.urls import reverse

from tests.conftest import Cast
from tests.factories import RecordFactory, UserFactory
from tests.review.opinions import annotate


def chart(page: str, title: str) -> str:
    match = re.search(
        rf'<figure class="chart">\s*<figcaption>{re.escape(title)}.*?</figure>', page, re.S
    )
    assert match, f"No chart titled {title}"
    return match.group(0)


def test_a_negative_kappa_is_drawn_left_of_zero_and_an_undefined_one_as_a_dash(
    cast: Cast,
) -> None:
    ann, bob, cyd, dee = (UserFactory(username=name) for name in ("ann", "bob", "cyd", "dee"))
    for number in range(8):
        record = RecordFactory(project=cast.project, searchable=False)
        # Bob says the opposite of Ann, every time: agreement far worse than chance.
        annotate(record, ann, "unsafe" if number % 2 else "safe")
        annotate(record, bob, "safe" if number % 2 else "unsafe")
    for _ in range(6):
        # Cyd and Dee always say safe: their kappa is undefined (no variation to agree on).
        record = RecordFactory(project=cast.project, searchable=False)
        annotate(record, cyd, "safe")
        annotate(record, dee, "safe")

    page = (
        cast.client_for("reviewer")
        .get(reverse("reports:agreement", args=[cast.project.slug]))
        .content.decode()
    )

    pairs = chart(page, "Cohen&#x27;s kappa, pairs sharing the most records")
    svg = pairs.partition("</svg>")[0]
    assert ">-1.000</text>" in svg
    assert 'class="chart-bar series-0 negative"' in svg
    zero = float(re.search(r'class="chart-axis chart-zero" x1="([\d.]+)"', svg).group(1))
    bar_x = float(re.search(r'class="chart-bar series-0 negative" x="([\d.]+)"', svg).group(1))
    assert bar_x < zero
    assert '<th scope="row">cyd &amp; dee</th><td>-</td>' in pairs
    assert svg.count('<rect class="chart-bar') == 1
    assert "0.000" not in svg
