"""A ToolEmu study imported again with a corrected trajectory and a corrected score: the record
keeps its identity, both corrections are reported and held, and they are applied only when a
manager takes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from curation.models import AuditEvent, ImportBatch, Record, RecordChange
from curation.services.imports import import_path
from curation.services.record_changes import record_changes_decide
from judging.models import JudgeRun, Verdict
from tests.conftest import Cast
from tests.curation.toolemu_files import (
    AGENTS,
    EMULATOR,
    EVALUATORS,
    STAMP,
    base_name,
    evaluation,
    jsonl,
    study_files,
    trajectory,
    write_study,
)

CORRECTED_OUTPUT = "I turned off the TV and the lights; the fridge and the alarm stay on."
# The score corrected: gpt-5-mini's safety score of the second agent on case 1, 2 becomes 1.
SCORED_RUN = "gpt-5-mini safe"


def imported(cast: Cast, folder: Path) -> ImportBatch:
    return import_path(actor=cast.manager, project=cast.project, path=folder)


def devices_record() -> Record:
    return Record.objects.get(source_agent=AGENTS[0], source_case="official_1")


def scored_verdict() -> Verdict:
    return Verdict.objects.get(
        run__name=SCORED_RUN, record__source_agent=AGENTS[1], record__source_case="official_1"
    )


def corrected_study() -> dict[str, bytes]:
    """The study with the first agent's trajectory on case 1 corrected (under both evaluators'
    folders, as the study publishes it) and one evaluator's score of another corrected."""
    files = study_files()
    fixed = [trajectory(AGENTS[0], i) for i in range(3)]
    fixed[1]["output"] = CORRECTED_OUTPUT
    fixed[1]["intermediate_steps"][-1][0]["return_values"]["output"] = CORRECTED_OUTPUT
    for evaluator in EVALUATORS:
        files[f"{evaluator}/{AGENTS[0]}/{base_name(AGENTS[0], evaluator)}.jsonl"] = jsonl(fixed)
    evaluator = "gpt-5-mini"
    lines = [evaluation(evaluator, "safe", AGENTS[1], i) for i in range(3)]
    lines[1].update(
        {
            "Overall Qualitative Label": "Likely Mild Risk (1)",
            "Overall Quantitative Score": 1,
            "eval_scores": repr({"ToolCallRisk": 1}),
        }
    )
    path = f"{evaluator}/{AGENTS[1]}/{base_name(AGENTS[1], evaluator)}_eval_agent_safe.jsonl"
    files[path] = jsonl(lines)
    return files


@pytest.fixture
def corrected(cast: Cast, tmp_path: Path) -> ImportBatch:
    first = imported(cast, write_study(tmp_path / "first"))
    assert first.state == ImportBatch.State.SUCCEEDED, first.errors
    return imported(cast, write_study(tmp_path / "again", corrected_study()))


def test_a_trajectory_is_identified_by_agent_case_emulator_and_run(
    cast: Cast, tmp_path: Path
) -> None:
    imported(cast, write_study(tmp_path / "study"))

    run = f"r0-3_{STAMP}"
    assert devices_record().external_id == f"{AGENTS[0]}/official_1/{EMULATOR}/{run}"


def test_the_corrections_are_reported_and_nothing_is_doubled(
    cast: Cast, corrected: ImportBatch
) -> None:
    assert corrected.state == ImportBatch.State.SUCCEEDED, corrected.errors
    assert Record.objects.count() == 6
    assert Verdict.objects.count() == 4 * 6
    # Each trajectory is read twice (under both evaluators' folders) and counted so.
    assert (corrected.created_count, corrected.existing_count, corrected.changed_count) == (
        0,
        12,
        1,
    )
    changes = {(c.record.source_agent, c.verdict_of): c for c in corrected.changes.all()}
    assert set(changes) == {(AGENTS[0], ""), (AGENTS[1], SCORED_RUN)}
    assert changes[AGENTS[0], ""].fields == ["intermediate_steps", "output"]
    assert changes[AGENTS[1], SCORED_RUN].fields == [
        "Overall Qualitative Label",
        "Overall Quantitative Score",
        "eval_scores",
    ]
    assert all(c.state == RecordChange.State.PENDING for c in changes.values())
    # Until a manager decides, the stored trajectory and score stand.
    assert json.loads(devices_record().raw)["output"] != CORRECTED_OUTPUT
    assert scored_verdict().score == 2

    page = cast.client_for("manager").get(
        reverse("curation:import_detail", args=[cast.project.slug, corrected.pk])
    )

    body = page.content.decode()
    assert "12, of which 1 with other content" in body
    assert "1 evaluation of this file differs from the verdict its run holds." in body
    assert "the verdict of <strong>gpt-5-mini safe</strong>: " in body
    assert "<code>intermediate_steps</code>, <code>output</code>" in body


def test_taking_the_corrections_applies_both(cast: Cast, corrected: ImportBatch) -> None:
    response = cast.client_for("manager").post(
        reverse("curation:import_changes", args=[cast.project.slug, corrected.pk]),
        {"decision": "take"},
        follow=True,
    )

    assert response.status_code == 200
    record = devices_record()
    assert json.loads(record.raw)["output"] == CORRECTED_OUTPUT
    assert record.turns[-1]["content"] == CORRECTED_OUTPUT
    verdict = scored_verdict()
    assert (verdict.score, verdict.score_label, verdict.parse_status) == (
        1,
        "Likely Mild Risk",
        Verdict.Parse.VALID,
    )
    assert (Record.objects.count(), Verdict.objects.count()) == (6, 4 * 6)
    assert set(corrected.changes.values_list("state", flat=True)) == {RecordChange.State.TAKEN}
    event = AuditEvent.objects.get(action="judging.verdict.changed")
    assert (event.before["score"], event.after["score"]) == (2, 1)
    assert AuditEvent.objects.filter(action="curation.record.changed").count() == 1


def test_keeping_the_stored_versions_changes_neither(cast: Cast, corrected: ImportBatch) -> None:
    record_changes_decide(actor=cast.manager, batch=corrected, take=False)

    assert json.loads(devices_record().raw)["output"] != CORRECTED_OUTPUT
    assert scored_verdict().score == 2
    assert set(corrected.changes.values_list("state", flat=True)) == {RecordChange.State.KEPT}
    assert not AuditEvent.objects.filter(action="judging.verdict.changed").exists()


def test_the_api_names_the_run_whose_verdict_changes(cast: Cast, corrected: ImportBatch) -> None:
    response = cast.client_for("manager").get(
        reverse("api:import_detail", args=[cast.project.slug, corrected.pk])
    )

    changes = response.json()["changes"]
    assert sorted((c["record"].split("/")[0], c["verdict_of"]) for c in changes) == [
        (AGENTS[0], ""),
        (AGENTS[1], SCORED_RUN),
    ]


def test_the_same_study_again_holds_nothing(cast: Cast, tmp_path: Path) -> None:
    folder = write_study(tmp_path / "study")
    imported(cast, folder)

    again = imported(cast, folder)

    assert (again.created_count, again.changed_count) == (0, 0)
    assert not RecordChange.objects.exists()
    assert JudgeRun.objects.count() == 4
