"""Quality flags runs whose answers are mostly invalid or errors (more than half of their
verdicts) and leaves them out of comparisons unless asked, on the page and in the API."""

from __future__ import annotations

import pytest
from django.urls import reverse

from reports.quality import Reference, quality_report
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import RecordFactory, rjudge_record
from tests.review.opinions import judge_run


@pytest.fixture
def runs(cast: Cast) -> dict[str, object]:
    records = [
        RecordFactory(project=cast.project, source=rjudge_record(n, label=n % 2))
        for n in range(1, 5)
    ]
    gold = {r: "unsafe" if n % 2 else "safe" for n, r in enumerate(records, start=1)}
    down = {**dict.fromkeys(records, "error"), records[0]: "invalid"}
    return {
        "good": judge_run(cast.project, "Careful judge", gold),
        "down": judge_run(cast.project, "Endpoint down", down),
    }


def test_the_report_leaves_a_run_of_mostly_errors_out_unless_asked(cast: Cast, runs) -> None:
    ids = [runs["good"].pk, runs["down"].pk]

    report = quality_report(cast.project, run_ids=ids, reference=Reference.GOLD)
    everything = quality_report(
        cast.project, run_ids=ids, reference=Reference.GOLD, include_flagged=True
    )

    assert [run.run.name for run in report.runs] == ["Careful judge"]
    [left_out] = report.left_out
    assert (left_out.run.name, left_out.usability.unusable, left_out.usability.verdicts) == (
        "Endpoint down",
        4,
        4,
    )
    assert [run.usability.flagged for run in everything.runs] == [False, True]
    assert everything.left_out == []


def test_the_page_compares_the_sound_runs_and_says_which_it_left_out(cast: Cast, runs) -> None:
    client = cast.client_for("reviewer")
    url = reverse("reports:quality", args=[cast.project.slug])

    default = client.get(url).content.decode()
    asked = client.get(url, {"runs": [runs["good"].pk, runs["down"].pk]}).content.decode()
    included = client.get(url, {"include_flagged": "on"}).content.decode()

    summary = default.partition('class="data quality-summary"')[2].partition("</table>")[0]
    assert "Careful judge" in summary and "Endpoint down" not in summary
    assert "Left out of the comparison" in asked
    assert "Endpoint down</a>: 4 of 4 verdicts invalid or errors" in asked
    summary = included.partition('class="data quality-summary"')[2].partition("</table>")[0]
    assert "Endpoint down" in summary and "Mostly invalid or errors" in summary
    assert "Left out of the comparison" not in included


def test_the_api_leaves_the_flagged_run_out_and_lists_it(cast: Cast, runs) -> None:
    api = token_client(cast.reviewer)
    url = reverse("reports_api:quality", args=[cast.project.slug])
    ids = f"?runs={runs['good'].pk}&runs={runs['down'].pk}"

    body = api.get(url + ids).json()
    included = api.get(url + ids + "&include_flagged=true").json()

    assert [run["name"] for run in body["runs"]] == ["Careful judge"]
    assert body["runs"][0]["usability"] == {"verdicts": 4, "unusable": 0, "flagged": False}
    assert body["left_out"] == [
        {
            "run": runs["down"].pk,
            "name": "Endpoint down",
            "usability": {"verdicts": 4, "unusable": 4, "flagged": True},
        }
    ]
    assert [run["name"] for run in included["runs"]] == ["Careful judge", "Endpoint down"]
    assert included["left_out"] == []
