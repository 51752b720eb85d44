"""The records the list's filters match, exported with their labels as they stand, as JSON Lines
and CSV, from the page and the API, without a release."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from releases.models import Release
from review.models import Adjudication
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.releases.helpers import annotators, label, record

pytestmark = pytest.mark.django_db


def streamed(response) -> str:
    assert response.status_code == 200, getattr(response, "content", b"")
    return b"".join(response.streaming_content).decode()


@pytest.fixture
def labelled(cast: Cast):
    """Three records: one labelled unsafe twice, one settled safe, one with a hostile id."""
    people = annotators(cast.project, 2)
    first, second = record(cast.project, 1), record(cast.project, 2)
    hostile = record(cast.project, 3)
    hostile.external_id = '=HYPERLINK("http://evil")'
    hostile.save(update_fields=["external_id"])
    for person in people:
        label(first, person, "unsafe", safety=1, risk_description="Deletes mail.")
    label(second, people[0], "unsafe", safety=0)
    Adjudication.objects.create(
        project=cast.project,
        record=second,
        label="safe",
        reason="Old mail only.",
        reviewer=cast.reviewer,
    )
    return first, second, hostile


def test_the_page_exports_the_filtered_records_as_json_lines(cast: Cast, labelled) -> None:
    first, second, _ = labelled
    url = reverse("hub:record_export", args=[cast.project.slug, "jsonl"])

    everything = streamed(cast.client_for("reviewer").get(url)).splitlines()
    settled = streamed(cast.client_for("reviewer").get(url, {"final": "safe"})).splitlines()

    rows = {row["id"]: row for row in map(json.loads, everything)}
    assert len(rows) == 3
    assert rows[first.external_id]["consensus"] == "unsafe"
    assert rows[first.external_id]["final_label"] == "unsafe"
    assert rows[first.external_id]["mean_scores"] == {"safety": 1.0, "helpfulness": None}
    assert [entry["verdict"] for entry in rows[first.external_id]["labels"]] == ["unsafe"] * 2
    assert (rows[second.external_id]["final_label"], rows[second.external_id]["final_source"]) == (
        "safe",
        "adjudicated",
    )
    assert [json.loads(line)["id"] for line in settled] == [second.external_id]
    assert not Release.objects.exists()


def test_the_api_exports_csv_with_formulas_defused(cast: Cast, labelled) -> None:
    url = reverse("hub_api:record_export", args=[cast.project.slug, "csv"])

    response = token_client(cast.manager).get(url)

    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(streamed(response))))
    assert len(rows) == 3
    hostile = rows[2]
    assert hostile["id"].startswith("'=HYPERLINK")
    assert {row["labels"] for row in rows} == {"2", "1", "0"}


def test_annotators_cannot_export_and_formats_are_two(cast: Cast, labelled) -> None:
    jsonl = reverse("hub:record_export", args=[cast.project.slug, "jsonl"])
    xml = reverse("hub:record_export", args=[cast.project.slug, "xml"])

    assert cast.client_for("annotator").get(jsonl).status_code == 403
    assert cast.client_for("reviewer").get(xml).status_code == 404
    assert (
        token_client(cast.annotator)
        .get(reverse("hub_api:record_export", args=[cast.project.slug, "csv"]))
        .status_code
        == 403
    )
