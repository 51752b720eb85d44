"""A release runs as an Inspect evaluation of a safety judge on its records, with R-Judge's two
steps, and measures a judge exactly as the studio's Quality page measures a run that answered
the same.

Inspect runs the task with its mock model as a scripted judge, in a process of its own
(tests/releases/inspect_judge.py).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from curation.models import Record
from judging.protocols.rjudge import DECIDE, RJudge
from judging.services.run_engine.execution import case_of
from releases.build import release_folder
from releases.models import Release
from releases.services import release_build
from reports.quality import Reference, quality_report
from tests.conftest import Cast
from tests.releases.helpers import rjudge_gold_release
from tests.review.opinions import judge_run

pytestmark = pytest.mark.django_db
DRIVER = Path(__file__).with_name("inspect_judge.py")

# The answers a judge gives, each read by R-Judge's rule: valid ones in other words than the
# bare label, and invalid ones (both words, neither, a refusal).
ANSWERS = (
    "unsafe",
    "safe",
    "Unsafe.",
    "SAFE!",
    "The actions are unsafe: they leak data",
    "safe, because nothing happened",
    "safe or unsafe, hard to say",
    "I cannot judge this.",
    "unsafe",
    "Not-safe",
)
BEGIN = re.compile(r"\[BEGIN RECORD DATA ([0-9a-f]+)\]")


@pytest.fixture
def gold_release(cast: Cast, rjudge_dir: Path) -> Release:
    release = rjudge_gold_release(cast.project, cast.manager, rjudge_dir)
    return release_build(release.pk)


def answer_for(record_id: str) -> str:
    """A judge's answer on a record: fixed, and spread over ANSWERS."""
    return ANSWERS[int(hashlib.sha256(record_id.encode()).hexdigest(), 16) % len(ANSWERS)]


def released_copy(release: Release, tmp_path: Path) -> Path:
    """The release's files as a user downloads them, somewhere else than the studio's folder."""
    folder = tmp_path / "downloaded"
    shutil.copytree(release_folder(release), folder)
    return folder


def samples(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "judge_dataset.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.subprocess
def test_the_release_measures_a_judge_as_the_quality_page_measures_a_run(
    cast: Cast, gold_release: Release, tmp_path: Path
) -> None:
    folder = released_copy(gold_release, tmp_path)
    judged = samples(folder)
    assert len(judged) == 571
    # The judge's answer to each sample, known by its first message (its fence token is the
    # record's own).
    answers = {sample["input"][0]["content"]: answer_for(sample["id"]) for sample in judged}
    assert len(answers) == 571
    answers_file = tmp_path / "answers.json"
    answers_file.write_text(json.dumps(answers))

    # `inspect eval downloaded/judge_task.py`, in the folder the release was downloaded to.
    finished = subprocess.run(  # noqa: S603 (this interpreter, the test's own arguments)
        [
            sys.executable,
            DRIVER,
            tmp_path,
            "downloaded/judge_task.py",
            answers_file,
            tmp_path / "logs",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert finished.returncode == 0, finished.stderr
    evaluation = json.loads(finished.stdout.splitlines()[-1])
    assert evaluation["samples"] == 571
    # The studio's run that gave the same answers, each parsed by the studio's judge.
    verdicts = {}
    for record in Record.objects.filter(project=cast.project):
        answer = answer_for(record.external_id)
        outcome = RJudge().judge(case_of(record), lambda _, answer=answer: answer)
        verdicts[record] = outcome.label or "invalid"
    run = judge_run(cast.project, "scripted judge", verdicts)
    report = quality_report(cast.project, run_ids=[run.pk], reference=Reference.GOLD, resamples=10)
    studio = {
        name: float(estimate.value) for name, estimate in report.runs[0].overall.scores.items()
    }
    assert report.runs[0].overall.n == 571
    for name in ("f1", "recall", "specificity", "validity"):
        assert evaluation["metrics"][name] == pytest.approx(studio[name], abs=1e-12), name
    # The answers hold invalid ones and wrong ones: the figures are not the trivial ones.
    assert {name: round(value, 4) for name, value in studio.items()} == {
        "f1": 0.3752,
        "recall": 0.3721,
        "specificity": 0.3185,
        "validity": 0.7145,
    }


def test_each_sample_is_the_prompt_the_studios_rjudge_judges_send(
    cast: Cast, gold_release: Release, tmp_path: Path
) -> None:
    by_id = {sample["id"]: sample for sample in samples(release_folder(gold_release))}
    for record in Record.objects.filter(project=cast.project).order_by("id")[:60]:
        sent: list[list[dict[str, str]]] = []

        def ask(messages: list[dict[str, str]], sent: list = sent) -> str:
            sent.append(list(messages))
            return "unsafe"

        RJudge().judge(case_of(record), ask)
        sample = by_id[record.external_id]

        # The same messages, up to the fence's token, which the studio draws afresh each time.
        assert untokened(sample["input"]) == untokened(sent[0])
        assert sample["target"] == record.gold_label


def untokened(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    match = BEGIN.search(messages[0]["content"])
    assert match is not None
    return [{**m, "content": m["content"].replace(match.group(1), "TOKEN")} for m in messages]


def test_the_task_needs_inspect_alone(gold_release: Release) -> None:
    task = release_folder(gold_release) / "judge_task.py"
    tree = ast.parse(task.read_text())
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported - set(sys.stdlib_module_names) == {"inspect_ai"}
    # Its second question is the studio judges' own.
    (decide,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "DECIDE"
    ]
    assert ast.literal_eval(decide) == DECIDE
