"""ToolEmu trajectories imported as the study publishes them: a folder or a zip of its files."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from curation.choices import SourceFormat
from curation.models import ImportBatch, Record
from curation.services.imports import import_path
from tests.conftest import Cast
from tests.curation.import_files import upload, write_file, zip_bytes
from tests.curation.test_import_upload_page import wait_for
from tests.curation.toolemu_files import (
    AGENTS,
    CASES,
    EVALUATORS,
    base_name,
    jsonl,
    study_files,
    trajectory,
    write_study,
)


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"


def imported(cast: Cast, path: Path) -> ImportBatch:
    return import_path(actor=cast.manager, project=cast.project, path=path)


def devices_record(cast: Cast) -> Record:
    """The first agent's trajectory on the case with two tool calls."""
    return cast.project.records.get(scenario__name="official_1", external_id__startswith=AGENTS[0])


def test_a_study_folder_becomes_one_record_per_trajectory(cast: Cast, tmp_path: Path) -> None:
    batch = imported(cast, write_study(tmp_path / "study"))

    assert batch.state == ImportBatch.State.SUCCEEDED, batch.errors
    # The same trajectories lie under each evaluator's folder: they are one record each.
    assert cast.project.records.count() == len(AGENTS) * len(CASES)
    assert batch.record_count == len(EVALUATORS) * len(AGENTS) * len(CASES)
    assert batch.created_count == len(AGENTS) * len(CASES)
    record = devices_record(cast)
    assert record.source_format == SourceFormat.TOOLEMU
    assert record.category.name == "GoogleHome"
    assert record.source_path.endswith(f"{base_name(AGENTS[0], EVALUATORS[0])}.jsonl")
    assert record.source_position == 2


def test_tool_calls_keep_the_tool_apart_from_its_input(cast: Cast, tmp_path: Path) -> None:
    imported(cast, write_study(tmp_path / "study"))
    record = devices_record(cast)

    roles = [turn["role"] for turn in record.turns]
    assert roles == ["user", "agent", "environment", "agent", "environment", "agent"]
    call = record.turns[1]
    assert call["tool"] == "GoogleHome: ListDevices"
    assert call["action"] == "{}"
    assert call["thought"].startswith("Thought: list the devices.")
    assert record.turns[2]["notes"] == {
        "summary": "Three devices are listed, including the fridge and the alarm.",
        "thought": "The alarm is included so the agent may switch it off.",
    }
    assert record.turns[-1]["content"] == f"{AGENTS[0]} finished official_1: done as asked."
    assert record.turns[0]["content"] == CASES[1]["User Instruction"]


def test_importing_the_study_again_adds_nothing(cast: Cast, tmp_path: Path) -> None:
    folder = write_study(tmp_path / "study")
    imported(cast, folder)

    again = imported(cast, folder)

    assert again.state == ImportBatch.State.SUCCEEDED
    assert again.created_count == 0
    assert cast.project.records.count() == len(AGENTS) * len(CASES)


def test_a_zip_of_the_study_imports_as_the_folder_does(cast: Cast, tmp_path: Path) -> None:
    path = write_file(tmp_path / "study.zip", zip_bytes(study_files()))

    batch = imported(cast, path)

    assert batch.state == ImportBatch.State.SUCCEEDED, batch.errors
    assert cast.project.records.count() == len(AGENTS) * len(CASES)


def test_a_broken_trajectory_names_file_line_and_field_and_nothing_is_kept(
    cast: Cast, tmp_path: Path
) -> None:
    files = study_files()
    path = f"{EVALUATORS[0]}/{AGENTS[0]}/{base_name(AGENTS[0], EVALUATORS[0])}.jsonl"
    broken = trajectory(AGENTS[0], 1)
    broken["intermediate_steps"][0][0] = ["GoogleHome: ListDevices", {"not": "text"}, "log"]
    del broken["case_idx"]
    files[path] = jsonl([trajectory(AGENTS[0], 0), broken, trajectory(AGENTS[0], 2)])

    batch = imported(cast, write_study(tmp_path / "study", files))

    assert batch.state == ImportBatch.State.FAILED
    assert {(error["file"], error["index"], error["field"]) for error in batch.errors} == {
        (path, 2, "case_idx"),
        (path, 2, "intermediate_steps[0][0]"),
    }
    assert not Record.objects.exists()


def test_the_command_imports_the_study(cast: Cast, tmp_path: Path) -> None:
    out = StringIO()

    call_command("import_records", cast.project.slug, str(write_study(tmp_path / "s")), stdout=out)

    assert out.getvalue().startswith("Imported 12 records: 6 new, 6 already in the project.")


def test_the_record_page_shows_the_trace_with_notes_and_thinking_folded(
    cast: Cast, tmp_path: Path
) -> None:
    imported(cast, write_study(tmp_path / "study"))
    record = devices_record(cast)

    page = (
        cast.client_for("reviewer")
        .get(reverse("hub:record_detail", args=[cast.project.slug, record.pk]))
        .content.decode()
    )

    assert '<code class="tool">GoogleHome: ListDevices</code>' in page
    assert "<summary>Emulator&#x27;s summary</summary>" in page
    assert "Risky: the house is now unguarded." in page
    # The thinking is folded away from the thought, not lost.
    assert "<summary>The agent's thinking (&lt;think&gt; blocks)</summary>" in page
    assert "All devices means all." in page
    assert "&lt;think&gt;All devices" not in page


def test_hostile_text_in_a_trajectory_is_shown_as_text(cast: Cast, tmp_path: Path) -> None:
    imported(cast, write_study(tmp_path / "study"))
    record = cast.project.records.filter(scenario__name="official_2").first()

    page = (
        cast.client_for("reviewer")
        .get(reverse("hub:record_detail", args=[cast.project.slug, record.pk]))
        .content.decode()
    )

    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_evaluator_files_are_not_taken_for_trajectories(cast: Cast, tmp_path: Path) -> None:
    batch = imported(cast, write_study(tmp_path / "study"))

    assert batch.state == ImportBatch.State.SUCCEEDED, json.dumps(batch.errors)
    paths = set(cast.project.records.values_list("source_path", flat=True))
    assert len(paths) == len(AGENTS)
    assert not any("eval_agent" in path for path in paths)


@pytest.mark.django_db(transaction=True)
def test_an_uploaded_zip_of_the_study_is_imported_by_a_worker(
    cast: Cast, celery_worker: None
) -> None:
    client = cast.client_for("manager")

    client.post(
        reverse("curation:import_list", args=[cast.project.slug]),
        {"file": upload("study.zip", zip_bytes(study_files())), "format": "auto"},
    )

    batch = cast.project.import_batches.get()
    url = reverse("curation:import_detail", args=[cast.project.slug, batch.pk])
    page = wait_for(client, url, "Imported")
    assert "<dt>New</dt><dd>6</dd>" in page
    assert cast.project.records.filter(source_format=SourceFormat.TOOLEMU).count() == 6


def test_the_api_gives_a_tool_call_as_tool_and_input(cast: Cast, tmp_path: Path) -> None:
    imported(cast, write_study(tmp_path / "study"))
    record = devices_record(cast)

    response = cast.client_for("reviewer").get(
        f"/api/projects/{cast.project.slug}/records/{record.pk}/"
    )

    assert response.status_code == 200
    call = response.json()["turns"][1]
    assert (call["tool"], call["action"]) == ("GoogleHome: ListDevices", "{}")
    assert response.json()["raw"]["case"]["name"] == "official_1"
    test_case = response.json()["test_case"]
    assert (test_case["name"], test_case["index"]) == ("official_1", 1)
    assert test_case["Potential Risky Actions"] == ["Turning off the security alarm."]


def test_one_trajectory_file_alone_is_imported_and_a_case_without_toolkits_is_toolemu(
    cast: Cast, tmp_path: Path
) -> None:
    lines = [trajectory(AGENTS[0], 0), trajectory(AGENTS[0], 1)]
    lines[1]["case"] = {**lines[1]["case"], "Toolkits": []}
    path = write_file(tmp_path / f"{base_name(AGENTS[0], EVALUATORS[0])}.jsonl", jsonl(lines))

    batch = imported(cast, path)

    assert batch.state == ImportBatch.State.SUCCEEDED, batch.errors
    assert sorted(cast.project.records.values_list("category__name", flat=True)) == [
        "Terminal",
        "ToolEmu",
    ]


def test_a_toolkit_name_too_long_for_a_category_is_refused(cast: Cast, tmp_path: Path) -> None:
    line = trajectory(AGENTS[0], 0)
    line["case"] = {**line["case"], "Toolkits": ["T" * 101]}
    path = write_file(tmp_path / f"{base_name(AGENTS[0], EVALUATORS[0])}.jsonl", jsonl([line]))

    batch = imported(cast, path)

    assert batch.state == ImportBatch.State.FAILED
    assert [(e["index"], e["field"], e["message"]) for e in batch.errors] == [
        (1, "case.Toolkits", "the first toolkit is longer than 100 characters")
    ]
