"""Inspect eval logs imported as Inspect writes them: a record per sample and epoch with its
conversation, and a run per task and scorer with the samples' scores."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from django.urls import reverse
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

from curation.choices import SafetyLabel, SourceFormat
from curation.models import ImportBatch, Record
from curation.services.imports import import_batch_run, import_path
from judging.models import JudgeRun, Verdict
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.curation.import_files import upload, zip_bytes
from tests.curation.inspect_logs import (
    BODY,
    EPOCHS,
    MODEL,
    SAMPLES,
    SCORERS,
    SYSTEM,
    TASK,
    make_logs,
)

# Inspect makes the logs in a process of its own (tests/curation/inspect_logs.py).
pytestmark = pytest.mark.subprocess


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_logs(tmp_path_factory.mktemp("inspect"))


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"


def folder_of(logs: dict[str, Path], tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    for path in logs.values():
        shutil.copy(path, folder / path.name)
    return folder


def imported(cast: Cast, path: Path, **options: str) -> ImportBatch:
    batch = import_path(actor=cast.manager, project=cast.project, path=path, **options)
    assert batch.state == ImportBatch.State.SUCCEEDED, batch.errors
    return batch


def record_of(cast: Cast, log: EvalLog, sample_id: object, epoch: int) -> Record:
    return cast.project.records.get(
        external_id=f"{TASK}/{sample_id}/epoch-{epoch}/{log.eval.eval_id}"
    )


def assert_conversation_kept(cast: Cast, log: EvalLog) -> None:
    """Every message, tool call and tool result of every sample is on its record."""
    assert log.samples is not None
    for sample in log.samples:
        record = record_of(cast, log, sample.id, sample.epoch)
        assert record.profile == SYSTEM
        turns = record.turns
        expected = []
        for message in sample.messages:
            if message.role == "user":
                expected.append(("user", message.text, None, None))
            elif message.role == "assistant" and message.tool_calls:
                for index, call in enumerate(message.tool_calls):
                    thought = message.text if index == 0 else None
                    expected.append(("agent", thought, call.function, call.arguments))
            elif message.role == "assistant":
                expected.append(("agent", message.text, None, None))
            elif message.role == "tool":
                expected.append(("environment", message.text, message.function, None))
        shown = []
        for turn in turns:
            if turn["role"] == "agent" and turn.get("tool"):
                arguments = json.loads(turn["action"])
                shown.append(("agent", turn["thought"], turn["tool"], arguments))
            elif turn["role"] == "environment":
                shown.append(("environment", turn["content"], turn["notes"]["tool"], None))
            else:
                shown.append((turn["role"], turn["content"], None, None))
        assert shown == expected
        # The scripted agent calls its tool once, reads the result and answers.
        assert [turn[0] for turn in shown] == ["user", "agent", "environment", "agent"]
        assert shown[1][2:] == ("send_email", {"to": shown[1][3]["to"], "body": BODY})


def test_each_sample_and_epoch_of_both_formats_becomes_a_record(
    cast: Cast, logs: dict[str, Path], tmp_path: Path
) -> None:
    batch = imported(cast, folder_of(logs, tmp_path))

    per_log = len(SAMPLES) * EPOCHS
    assert batch.record_count == batch.created_count == 2 * per_log
    for path in logs.values():
        log = read_eval_log(path)
        assert len(log.samples or []) == per_log
        assert_conversation_kept(cast, log)
        for sample in log.samples or []:
            record = record_of(cast, log, sample.id, sample.epoch)
            assert record.source_format == SourceFormat.INSPECT
            assert record.category.name == TASK
            assert record.scenario.name == str(sample.id)
            assert record.source_agent == MODEL
            assert record.source_case == str(sample.id)
            assert record.source_replicate == f"epoch {sample.epoch}"
            assert record.preview == SAMPLES[sample.id]
            assert record.metadata["epoch"] == sample.epoch
            assert record.metadata["target"] == "mailed"


def test_the_scores_become_a_run_per_task_and_scorer(
    cast: Cast, logs: dict[str, Path], tmp_path: Path
) -> None:
    batch = imported(cast, folder_of(logs, tmp_path))

    runs = JudgeRun.objects.filter(project=cast.project).order_by("name")
    assert [run.name for run in runs] == [f"{TASK} {name}" for name in sorted(SCORERS)]
    scored = 2 * len(SAMPLES) * EPOCHS
    assert batch.evaluation_counts == {run.name: scored for run in runs}
    for run in runs:
        assert run.source == JudgeRun.Source.IMPORTED
        assert run.state == JudgeRun.State.SUCCEEDED
        assert run.total == run.valid_count == run.verdicts.count() == scored
    for path in logs.values():
        log = read_eval_log(path)
        for sample in log.samples or []:
            record = record_of(cast, log, sample.id, sample.epoch)
            for name, score in (sample.scores or {}).items():
                verdict = Verdict.objects.get(run__name=f"{TASK} {name}", record=record)
                assert verdict.score_label == score.value
                assert verdict.analysis == (score.explanation or "")
                assert json.loads(verdict.raw_output)["value"] == score.value
                assert verdict.score is None
    safety = Verdict.objects.filter(run__name=f"{TASK} safety_words")
    # The scripted agent mails bob, then alice, in turn: half the samples are unsafe.
    assert sorted(safety.values_list("label", flat=True)) == sorted(
        [SafetyLabel.SAFE, SafetyLabel.UNSAFE] * (scored // 2)
    )
    assert set(Verdict.objects.filter(run__name=f"{TASK} includes").values_list("label")) == {("",)}


def test_importing_the_logs_again_changes_nothing(
    cast: Cast, logs: dict[str, Path], tmp_path: Path
) -> None:
    folder = folder_of(logs, tmp_path)
    imported(cast, folder)

    again = imported(cast, folder)

    assert again.created_count == 0
    assert again.existing_count == again.record_count == 2 * len(SAMPLES) * EPOCHS
    assert again.changed_count == 0
    assert cast.project.records.count() == again.record_count
    assert Verdict.objects.filter(run__project=cast.project).count() == 2 * again.record_count


def test_a_changed_sample_is_reported_as_a_change_of_its_record(
    cast: Cast, logs: dict[str, Path], tmp_path: Path
) -> None:
    imported(cast, logs["json"])
    log = read_eval_log(logs["json"])
    assert log.samples is not None
    changed = log.samples[0]
    changed.messages[-1].content = "Done, and I also deleted the audit log."
    edited = tmp_path / "edited.json"
    write_eval_log(log, str(edited))

    batch = imported(cast, edited)

    assert batch.created_count == 0
    assert batch.changed_count == 1
    record = record_of(cast, log, changed.id, changed.epoch)
    assert [change.record for change in batch.changes.all()] == [record]
    assert "deleted the audit log" not in json.dumps(record.turns)


def test_an_eval_log_uploaded_through_the_api_is_imported(
    cast: Cast, logs: dict[str, Path]
) -> None:
    response = token_client(cast.manager).post(
        reverse("api:import_list", args=[cast.project.slug]),
        {"file": upload(logs["eval"].name, logs["eval"].read_bytes()), "format": "inspect"},
    )
    assert response.status_code == 202, response.content

    batch = import_batch_run(batch_id=response.json()["id"])

    assert batch.state == ImportBatch.State.SUCCEEDED, batch.errors
    assert_conversation_kept(cast, read_eval_log(logs["eval"]))
    assert cast.project.judge_runs.count() == len(SCORERS)


def test_a_zip_of_logs_is_detected_and_imported(
    cast: Cast, logs: dict[str, Path], tmp_path: Path
) -> None:
    archive = tmp_path / "logs.zip"
    archive.write_bytes(
        zip_bytes({f"run/{path.name}": path.read_bytes() for path in logs.values()})
    )

    batch = imported(cast, archive)

    assert batch.created_count == 2 * len(SAMPLES) * EPOCHS
    for path in logs.values():
        assert_conversation_kept(cast, read_eval_log(path))


def test_the_record_page_shows_the_conversation_and_scores_as_text(
    cast: Cast, logs: dict[str, Path]
) -> None:
    imported(cast, logs["eval"])
    log = read_eval_log(logs["eval"])
    record = record_of(cast, log, "forward-secrets", 1)

    page = cast.client_for("manager").get(
        reverse("hub:record_detail", args=[cast.project.slug, record.pk])
    )

    html = page.content.decode()
    assert page.status_code == 200
    assert "send_email" in html
    assert "&lt;script&gt;alert(&#x27;owned&#x27;)&lt;/script&gt;" in html
    assert BODY not in html
    assert "&lt;b&gt;Never&lt;/b&gt; leak secrets." in html
    assert "&lt;em&gt;bob got it&lt;/em&gt;" in html
    assert f"{TASK} includes" in html


def test_a_file_that_is_no_inspect_log_is_reported_with_its_name(
    cast: Cast, tmp_path: Path
) -> None:
    bogus = tmp_path / "broken.eval"
    bogus.write_bytes(b"PK\x03\x04 this is no archive")

    batch = import_path(actor=cast.manager, project=cast.project, path=bogus)

    assert batch.state == ImportBatch.State.FAILED
    assert batch.errors[0]["file"] == "broken.eval"
    assert batch.errors[0]["index"] is None
    assert batch.errors[0]["message"].startswith("not an Inspect eval log")
    assert not cast.project.records.exists()


def test_a_sample_too_large_for_a_record_is_reported_with_its_place(
    cast: Cast, logs: dict[str, Path], tmp_path: Path
) -> None:
    log = read_eval_log(logs["json"])
    log.eval.task = "t" * 101
    edited = tmp_path / "long-task.json"
    write_eval_log(log, str(edited))

    batch = import_path(actor=cast.manager, project=cast.project, path=edited)

    assert batch.state == ImportBatch.State.FAILED
    problem = batch.errors[0]
    assert (problem["file"], problem["index"], problem["unit"], problem["field"]) == (
        "long-task.json",
        0,
        "sample",
        "eval.task",
    )
    assert problem["message"] == "the task's name is longer than 100 characters"
    assert len(batch.errors) == len(SAMPLES) * EPOCHS
    assert not cast.project.records.exists()
    assert not cast.project.judge_runs.exists()
