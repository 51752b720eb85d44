"""Bring your own verdicts: ToolEmu evaluator JSONL and safe / unsafe outputs, imported as a
run, noisy labels normalised, lines that match no record reported."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from curation.errors import DomainError
from curation.models import AuditEvent
from judging.models import JudgeRun
from judging.services.verdict_import import verdict_import
from tests.curation.api_clients import api_key
from tests.judging.judge_runs import numbered_records


def jsonl(*lines: object) -> SimpleUploadedFile:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    return SimpleUploadedFile("evaluations.jsonl", text.encode())


def evaluation(case_idx: object, label: str, score: object, thought: str = "Thought.") -> dict:
    return {
        "case_idx": case_idx,
        "Evaluator Thought": thought,
        "Overall Qualitative Label": label,
        "Overall Quantitative Score": score,
        "Evaluator Log Summary": "Summary.",
    }


def test_toolemu_safety_evaluations_are_imported_with_their_noise_removed(cast) -> None:
    numbered_records(cast.project, 4)
    upload = jsonl(
        evaluation(1, "**Possible Severe Risk (1)**", 1),
        evaluation(2, "[Certain No Risk (3)]", "3"),
        evaluation(3, "Likely Severe Risk", 2),
        evaluation(4, "something else", None),
        evaluation(77, "Possible Mild Risk (2)", 2),
        "not json at all",
        {"Overall Qualitative Label": "Poor (0)"},
    )

    run = verdict_import(
        actor=cast.manager, project=cast.project, upload=upload, protocol="toolemu_safety"
    )

    verdicts = {v.record.external_id: v for v in run.verdicts.select_related("record")}
    assert (run.source, run.state, run.judge) == (JudgeRun.Source.IMPORTED, "succeeded", None)
    assert (run.total, run.valid_count, run.invalid_count, run.error_count) == (4, 2, 2, 0)
    assert (verdicts["1"].score, verdicts["1"].score_label) == (1, "Possible Severe Risk")
    assert verdicts["1"].analysis == "Thought.\n\nSummary."
    assert json.loads(verdicts["1"].raw_output)["case_idx"] == 1
    assert (verdicts["2"].score, verdicts["2"].score_label) == (3, "Certain No Risk")
    assert verdicts["3"].parse_status == "invalid" and "disagree" in verdicts["3"].error
    assert verdicts["4"].parse_status == "invalid"
    assert run.report["unmatched"] == [{"line": 5, "id": "77"}]
    assert [p["line"] for p in run.report["problems"]] == [6, 7]
    assert AuditEvent.objects.get(action="judging.verdicts.imported").after["imported"] == 4


def test_helpfulness_labels_and_a_chosen_id_field(cast) -> None:
    numbered_records(cast.project, 2)
    upload = jsonl(
        {**evaluation(9, "[Excellent (3)]", 3), "record": "1"},
        {**evaluation(9, "Unsatisfactory", 1), "record": "2"},
    )

    run = verdict_import(
        actor=cast.manager,
        project=cast.project,
        upload=upload,
        protocol="toolemu_helpfulness",
        id_field="record",
    )

    scores = sorted(run.verdicts.values_list("score", "score_label"))
    assert scores == [(1, "Unsatisfactory"), (3, "Excellent")]


def test_safe_and_unsafe_verdicts_in_the_fields_teams_use(cast) -> None:
    numbered_records(cast.project, 5)
    upload = jsonl(
        {"id": 1, "verdict": "UNSAFE", "reasoning": "Moved money."},
        {"id": 2, "label": 0, "analysis": "Harmless."},
        {"external_id": "3", "pred": 1},
        {"id": 4, "pred": -1},
        {"id": 5, "verdict": "UNCLEAR"},
        {"id": 5, "verdict": "SAFE"},
    )

    run = verdict_import(actor=cast.manager, project=cast.project, upload=upload, protocol="rjudge")

    got = {
        v.record.external_id: (v.parse_status, v.label, v.analysis)
        for v in run.verdicts.select_related("record")
    }
    assert got == {
        "1": ("valid", "unsafe", "Moved money."),
        "2": ("valid", "safe", "Harmless."),
        "3": ("valid", "unsafe", ""),
        "4": ("invalid", "", ""),
        "5": ("invalid", "", ""),
    }
    assert run.report["problems"] == [{"line": 6, "message": "a second evaluation of 5, left out"}]


def test_a_file_that_matches_no_record_is_refused(cast) -> None:
    numbered_records(cast.project, 1)

    with pytest.raises(DomainError, match="No line of the file matched"):
        verdict_import(
            actor=cast.manager,
            project=cast.project,
            upload=jsonl({"id": 404, "verdict": "SAFE"}),
            protocol="safepro",
        )
    assert not JudgeRun.objects.exists()


def test_the_import_page_and_the_api_import_and_report(cast) -> None:
    numbered_records(cast.project, 1)
    page = cast.client_for("manager").post(
        reverse("judging:verdict_import", args=[cast.project.slug]),
        {
            "file": jsonl({"id": 1, "verdict": "SAFE"}, {"id": 2, "verdict": "SAFE"}),
            "protocol": "safepro",
        },
    )
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_key(cast.manager)}")
    response = api.post(
        reverse("judging_api:verdict_import", args=[cast.project.slug]),
        {"file": jsonl({"id": 1, "verdict": "UNSAFE"}), "protocol": "safepro", "name": "Theirs"},
    )

    first = JudgeRun.objects.get(name="Imported: evaluations.jsonl")
    assert page["Location"] == reverse("judging:run_detail", args=[cast.project.slug, first.pk])
    detail = cast.client_for("reviewer").get(page["Location"]).content.decode()
    assert "No record with the external id <code>2</code>" in detail
    assert response.status_code == 201
    assert (response.json()["name"], response.json()["valid_count"]) == ("Theirs", 1)
