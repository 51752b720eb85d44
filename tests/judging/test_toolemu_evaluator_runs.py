"""ToolEmu evaluator files imported with their trajectories: a run per evaluator and metric,
each evaluation on the trajectory of the same line, never matched by its eval_id."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

from django.core.management import call_command
from django.urls import reverse

from curation.models import ImportBatch, Record
from curation.services.imports import import_path
from judging.models import JudgeRun, Verdict
from tests.conftest import Cast
from tests.curation.toolemu_files import (
    AGENTS,
    EVALUATORS,
    base_name,
    evaluation,
    jsonl,
    study_files,
    write_study,
)

RUN_NAMES = [
    "Qwen3-32B help_ignore_safety",
    "Qwen3-32B safe",
    "gpt-5-mini help_ignore_safety",
    "gpt-5-mini safe",
]


def imported(cast: Cast, folder: Path) -> ImportBatch:
    return import_path(actor=cast.manager, project=cast.project, path=folder)


def verdict(run_name: str, agent: str, case: str) -> Verdict:
    return Verdict.objects.get(
        run__name=run_name, record__source_agent=agent, record__source_case=case
    )


def eval_path(evaluator: str, agent: str, metric: str) -> str:
    return f"{evaluator}/{agent}/{base_name(agent, evaluator)}_eval_agent_{metric}.jsonl"


def test_each_evaluator_and_metric_becomes_a_run_of_every_trajectory(
    cast: Cast, tmp_path: Path
) -> None:
    batch = imported(cast, write_study(tmp_path / "study"))

    assert batch.state == ImportBatch.State.SUCCEEDED, batch.errors
    runs = JudgeRun.objects.filter(project=cast.project).order_by("name")
    assert [run.name for run in runs] == RUN_NAMES
    for run in runs:
        assert run.source == JudgeRun.Source.IMPORTED
        assert run.state == JudgeRun.State.SUCCEEDED
        assert run.verdicts.count() == run.total == 6
    assert batch.evaluation_counts == dict.fromkeys(RUN_NAMES, 6)


def test_an_evaluation_scores_the_trajectory_on_its_line(cast: Cast, tmp_path: Path) -> None:
    imported(cast, write_study(tmp_path / "study"))

    # eval_id is 0..2 in every file: only the line tells the agents' trajectories apart.
    second = verdict("Qwen3-32B safe", AGENTS[1], "official_1")
    assert f"looked at what {AGENTS[1]} did on case 1" in second.analysis
    assert (second.score, second.score_label) == (0, "Likely Severe Risk")
    mild = verdict("Qwen3-32B safe", AGENTS[0], "official_0")
    assert (mild.score, mild.score_label) == (2, "Possible Mild Risk")


def test_noisy_labels_are_read_and_a_missing_one_is_invalid(cast: Cast, tmp_path: Path) -> None:
    imported(cast, write_study(tmp_path / "study"))

    missing = verdict("Qwen3-32B safe", AGENTS[0], "official_2")
    assert missing.parse_status == Verdict.Parse.INVALID
    assert missing.score is None
    # A prose label with no score: the score ToolEmu parsed (eval_scores) decides.
    prose = verdict("gpt-5-mini help_ignore_safety", AGENTS[0], "official_1")
    assert (prose.parse_status, prose.score, prose.score_label) == (
        Verdict.Parse.VALID,
        2,
        "Good",
    )
    run = JudgeRun.objects.get(name="Qwen3-32B safe")
    assert (run.valid_count, run.invalid_count) == (4, 2)


def test_importing_the_study_again_adds_no_run_and_no_verdict(cast: Cast, tmp_path: Path) -> None:
    folder = write_study(tmp_path / "study")
    imported(cast, folder)

    again = imported(cast, folder)

    assert again.state == ImportBatch.State.SUCCEEDED
    assert JudgeRun.objects.count() == 4
    assert Verdict.objects.count() == 4 * 6


def test_a_new_agent_adds_its_verdicts_to_the_same_runs(cast: Cast, tmp_path: Path) -> None:
    imported(cast, write_study(tmp_path / "one", study_files(agents=AGENTS[:1])))

    imported(cast, write_study(tmp_path / "all"))

    run = JudgeRun.objects.get(name="gpt-5-mini safe")
    assert run.verdicts.count() == run.total == len(run.record_ids) == 6


def test_eval_scores_are_read_as_a_literal_never_run(cast: Cast, tmp_path: Path) -> None:
    files = study_files()
    path = eval_path(EVALUATORS[1], AGENTS[0], "safe")
    lines = [evaluation(EVALUATORS[1], "safe", AGENTS[0], line) for line in range(3)]
    lines[1]["eval_scores"] = "{'ToolCallRisk': __import__('os').getpid()}"
    files[path] = jsonl(lines)

    batch = imported(cast, write_study(tmp_path / "study", files))

    assert batch.state == ImportBatch.State.FAILED
    assert [(e["file"], e["index"], e["field"]) for e in batch.errors] == [(path, 2, "eval_scores")]
    assert not Record.objects.exists()
    assert not JudgeRun.objects.exists()


def test_an_evaluator_file_of_another_length_fails_the_import(cast: Cast, tmp_path: Path) -> None:
    files = study_files()
    path = eval_path(EVALUATORS[0], AGENTS[1], "help_ignore_safety")
    files[path] = jsonl([evaluation(EVALUATORS[0], "help_ignore_safety", AGENTS[1], 0)])

    batch = imported(cast, write_study(tmp_path / "study", files))

    assert batch.state == ImportBatch.State.FAILED
    (error,) = batch.errors
    assert error["file"] == path
    assert "has 1 evaluations for the 3 trajectories" in error["message"]
    assert not Verdict.objects.exists()


def test_an_evaluator_file_without_its_trajectories_fails_the_import(
    cast: Cast, tmp_path: Path
) -> None:
    path = eval_path(EVALUATORS[0], AGENTS[0], "safe")
    folder = write_study(tmp_path / "study", {path: study_files()[path]})

    batch = imported(cast, folder)

    assert batch.state == ImportBatch.State.FAILED
    assert "which is not in this import" in batch.errors[0]["message"]


def test_the_command_and_the_import_page_report_the_evaluations(cast: Cast, tmp_path: Path) -> None:
    out = StringIO()
    call_command("import_records", cast.project.slug, str(write_study(tmp_path / "s")), stdout=out)
    batch = cast.project.import_batches.get()

    page = (
        cast.client_for("manager")
        .get(reverse("curation:import_detail", args=[cast.project.slug, batch.pk]))
        .content.decode()
    )

    assert "Evaluations: " + ", ".join(f"{name} 6" for name in RUN_NAMES) in out.getvalue()
    assert "<caption>Evaluations, kept as judge runs</caption>" in page
    assert "<tr><td>gpt-5-mini safe</td><td>6</td></tr>" in page


def test_the_runs_api_lists_the_evaluator_runs(cast: Cast, tmp_path: Path) -> None:
    imported(cast, write_study(tmp_path / "study"))

    response = cast.client_for("manager").get(f"/api/projects/{cast.project.slug}/runs/")

    assert response.status_code == 200
    body = response.json()
    rows = body["results"] if isinstance(body, dict) else body
    assert sorted(row["name"] for row in rows) == RUN_NAMES


def test_evaluators_two_apart_are_a_disagreement(cast: Cast, tmp_path: Path) -> None:
    imported(cast, write_study(tmp_path / "study"))

    # Safety on case 1: Qwen3-32B says 0, gpt-5-mini 2; on case 0, 2 against 3.
    apart = cast.project.records.get(source_agent=AGENTS[0], source_case="official_1")
    close = cast.project.records.get(source_agent=AGENTS[0], source_case="official_0")
    assert apart.disagreements.filter(kind="score_gap", state="open").exists()
    assert not close.disagreements.filter(kind="score_gap").exists()


def test_annotators_never_see_the_evaluations(cast: Cast, tmp_path: Path) -> None:
    imported(cast, write_study(tmp_path / "study"))

    page = (
        cast.client_for("annotator")
        .post(reverse("annotation:annotate_next", args=[cast.project.slug]), follow=True)
        .content.decode()
    )

    assert "<summary>The test case</summary>" in page
    assert "looked at what" not in page
    assert "Summary by" not in page
    assert "Risk (" not in page


def test_an_evaluator_run_has_its_page_with_its_verdicts(cast: Cast, tmp_path: Path) -> None:
    imported(cast, write_study(tmp_path / "study"))
    run = JudgeRun.objects.get(name="gpt-5-mini safe")

    response = cast.client_for("reviewer").get(
        reverse("judging:run_detail", args=[cast.project.slug, run.pk])
    )

    assert response.status_code == 200
    page = response.content.decode()
    assert "gpt-5-mini safe" in page
    assert "Possible Mild Risk" in page


def test_a_run_imported_by_hand_under_the_same_name_is_left_alone(
    cast: Cast, tmp_path: Path
) -> None:
    by_hand = JudgeRun.objects.create(
        project=cast.project,
        source=JudgeRun.Source.IMPORTED,
        name="gpt-5-mini safe",
        judge_snapshot={"protocol": "rjudge", "file": "verdicts.jsonl"},
        state=JudgeRun.State.SUCCEEDED,
    )

    imported(cast, write_study(tmp_path / "study"))

    assert not by_hand.verdicts.exists()
    assert JudgeRun.objects.filter(name="gpt-5-mini safe").count() == 2


def test_the_imports_api_reports_the_evaluations(cast: Cast, tmp_path: Path) -> None:
    batch = imported(cast, write_study(tmp_path / "study"))

    response = cast.client_for("manager").get(
        f"/api/projects/{cast.project.slug}/imports/{batch.pk}/"
    )

    assert response.status_code == 200
    assert response.json()["evaluation_counts"] == dict.fromkeys(RUN_NAMES, 6)
