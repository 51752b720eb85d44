"""A record knows its source (agent, emulator, case, replicate), and its test case is shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from curation.models import ImportBatch
from curation.selectors import record_search
from curation.services.imports import import_path
from curation.services.search import search_index_update
from tests.annotation.annotators import label_next
from tests.conftest import Cast
from tests.curation.toolemu_files import AGENTS, EMULATOR, STAMP, write_study
from tests.factories import RecordFactory, rjudge_record


@pytest.fixture
def study(cast: Cast, tmp_path: Path) -> None:
    batch = import_path(actor=cast.manager, project=cast.project, path=write_study(tmp_path / "s"))
    assert batch.state == ImportBatch.State.SUCCEEDED, batch.errors


def list_url(cast: Cast) -> str:
    return reverse("hub:record_list", args=[cast.project.slug])


def test_a_trajectory_knows_its_agent_emulator_case_and_replicate(cast: Cast, study: None) -> None:
    record = cast.project.records.get(source_agent=AGENTS[1], source_case="official_2")

    assert record.source_emulator == EMULATOR
    assert record.source_case_index == 2
    assert record.source_replicate == f"r0-3_{STAMP}"


def test_an_rjudge_record_has_no_source(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=rjudge_record(1))

    assert (record.source_agent, record.source_case, record.source_case_index) == ("", "", None)


def test_the_record_list_filters_by_source_agent(cast: Cast, study: None) -> None:
    RecordFactory(project=cast.project, source=rjudge_record(1))
    client = cast.client_for("reviewer")

    page = client.get(list_url(cast), {"agent": AGENTS[1]}).content.decode()

    assert "3 records" in page
    cell = '<td class="source-agent" title="{0}">{0}</td>'
    assert cell.format(AGENTS[1]) in page
    assert cell.format(AGENTS[0]) not in page
    assert f'<option value="{AGENTS[0]}">' in page


def test_the_records_api_filters_by_source_agent_and_gives_the_source(
    cast: Cast, study: None
) -> None:
    response = cast.client_for("reviewer").get(
        f"/api/projects/{cast.project.slug}/records/", {"agent": AGENTS[0]}
    )

    assert response.status_code == 200
    rows = response.json()["results"]
    assert {row["source_agent"] for row in rows} == {AGENTS[0]}
    assert sorted(row["source_case_index"] for row in rows) == [0, 1, 2]
    assert {row["source_emulator"] for row in rows} == {EMULATOR}


def test_the_record_page_shows_the_test_case_beside_the_trace(cast: Cast, study: None) -> None:
    record = cast.project.records.get(source_agent=AGENTS[0], source_case="official_1")

    page = (
        cast.client_for("reviewer")
        .get(reverse("hub:record_detail", args=[cast.project.slug, record.pk]))
        .content.decode()
    )

    # Folded, at the head of the interaction.
    assert '<details class="record-context test-case"><summary>The test case</summary>' in page
    assert "<dt>Underspecifications: Safety &amp; Security Constraints</dt>" in page
    assert "<li>The fridge and the alarm must stay on.</li>" in page
    assert "<li>Turning off the security alarm.</li>" in page
    assert f"<dt>Source agent</dt><dd>{AGENTS[0]}</dd>" in page


def test_the_labelling_page_shows_the_test_case(cast: Cast, study: None) -> None:
    client = cast.client_for("annotator")

    page = client.post(
        reverse("annotation:annotate_next", args=[cast.project.slug]), follow=True
    ).content.decode()

    assert "<summary>The test case</summary>" in page
    assert "<dt>Potential Risky Outcomes</dt>" in page
    assert "<dt>Expected Achievements</dt>" in page


def test_a_label_s_edit_page_shows_the_test_case(cast: Cast, study: None) -> None:
    annotation = label_next(cast.project, cast.annotator, "safe")

    page = (
        cast.client_for("annotator")
        .get(reverse("annotation:annotation_edit", args=[cast.project.slug, annotation.pk]))
        .content.decode()
    )

    assert "<summary>The test case</summary>" in page
    assert "<dt>Potential Risky Actions</dt>" in page


def test_the_search_finds_a_trajectory_by_its_tool(cast: Cast, study: None) -> None:
    search_index_update(project_id=cast.project.pk)

    found = record_search(cast.project, text="googlehome: turnoff")

    assert {record.source_case for record in found} == {"official_1"}
