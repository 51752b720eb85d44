"""ToolEmu's own all_toolkits.json and all_cases.json beside a study: tools show what they do."""

from __future__ import annotations

import json
from pathlib import Path

from django.urls import reverse

from curation.models import AuditEvent, ImportBatch, Toolkit
from curation.services.imports import import_path
from tests.conftest import Cast
from tests.curation.toolemu_files import AGENTS, CASES, TOOLKITS, study_files, write_study


def study_with_assets(root: Path, toolkits: object = TOOLKITS) -> Path:
    files = {
        **study_files(),
        "assets/all_toolkits.json": json.dumps(toolkits).encode(),
        "assets/all_cases.json": json.dumps(CASES).encode(),
    }
    return write_study(root, files)


def imported(cast: Cast, folder: Path) -> ImportBatch:
    return import_path(actor=cast.manager, project=cast.project, path=folder)


def test_toolkits_are_kept_and_cases_are_not_taken_for_records(cast: Cast, tmp_path: Path) -> None:
    batch = imported(cast, study_with_assets(tmp_path / "study"))

    assert batch.state == ImportBatch.State.SUCCEEDED, batch.errors
    assert cast.project.records.count() == len(AGENTS) * len(CASES)
    succeeded = AuditEvent.objects.get(action="curation.import.succeeded")
    assert succeeded.after["toolkits"] == ["GoogleHome", "Terminal"]
    toolkit = Toolkit.objects.get(project=cast.project, name="GoogleHome")
    assert toolkit.tools == {
        "GoogleHomeListDevices": "List the <b>devices</b> of the home.",
        "GoogleHomeTurnOff": "Switch a device off.",
    }


def test_importing_them_again_adds_nothing(cast: Cast, tmp_path: Path) -> None:
    folder = study_with_assets(tmp_path / "study")
    imported(cast, folder)

    again = imported(cast, folder)

    assert again.state == ImportBatch.State.SUCCEEDED
    assert Toolkit.objects.filter(project=cast.project).count() == 2


def test_a_tool_call_shows_what_its_tool_does_on_the_record_and_labelling_pages(
    cast: Cast, tmp_path: Path
) -> None:
    imported(cast, study_with_assets(tmp_path / "study"))
    record = cast.project.records.get(source_agent=AGENTS[0], source_case="official_1")

    record_page = (
        cast.client_for("reviewer")
        .get(reverse("hub:record_detail", args=[cast.project.slug, record.pk]))
        .content.decode()
    )
    labelling_page = (
        cast.client_for("annotator")
        .post(reverse("annotation:annotate_next", args=[cast.project.slug]), follow=True)
        .content.decode()
    )

    # "GoogleHome: ListDevices" is the toolkit's GoogleHomeListDevices.
    assert "<summary>What the tool does</summary>" in record_page
    assert "List the &lt;b&gt;devices&lt;/b&gt; of the home." in record_page
    assert "<summary>What the tool does</summary>" in labelling_page


def test_a_malformed_toolkit_file_names_the_field_and_nothing_is_kept(
    cast: Cast, tmp_path: Path
) -> None:
    broken = [TOOLKITS[0], {**TOOLKITS[1], "tools": [{"summary": "no name"}]}]

    batch = imported(cast, study_with_assets(tmp_path / "study", broken))

    assert batch.state == ImportBatch.State.FAILED
    assert [(e["file"], e["field"]) for e in batch.errors] == [
        ("assets/all_toolkits.json", "[1].tools[0]")
    ]
    assert not Toolkit.objects.exists()
    assert not cast.project.records.exists()
