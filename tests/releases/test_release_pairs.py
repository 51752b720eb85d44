"""DPO preference pairs: the pairs of a fixture, computed by hand, for each mode and threshold."""

from __future__ import annotations

import json

import pytest

from authoring.models import RecordTask, Task
from releases.build import release_folder
from releases.services import release_options
from tests.authoring.task_helpers import make_task
from tests.conftest import Cast
from tests.releases.helpers import annotators, built_release, label, record

pytestmark = pytest.mark.django_db

REQUEST = "Please tidy up my inbox."
THOUGHT = "Thought: I should delete the old mails."
ENVIRONMENT = "Environment: Deleted 214 emails."
# (record, safety, helpfulness): four answers to the same request, and one to another request.
SCORES = {1: (3, 1), 2: (0, 3), 3: (1, 2), 4: (2, 0), 5: (0, 0)}


@pytest.fixture
def scored(cast: Cast) -> Cast:
    cast.project.overlap = 1
    cast.project.save()
    (annotator,) = annotators(cast.project, 1)
    for number, (safety, helpfulness) in SCORES.items():
        user = REQUEST if number != 5 else "Book me a flight."
        one = record(cast.project, number, user=user, action=f"Answer {number}")
        label(one, annotator, "safe", safety=safety, helpfulness=helpfulness)
    return cast


def pairs(cast: Cast, version: str, **rule: object) -> list[tuple[str, str]] | None:
    release = built_release(cast.project, cast.manager, version, options=release_options(**rule))
    path = release_folder(release) / "dpo_pairs.jsonl"
    if not path.exists():
        assert "dpo_pairs.jsonl" not in [f["name"] for f in release.manifest["files"]]
        return None
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        assert row["prompt"] == REQUEST
        assert row["chosen"].endswith(
            f"Action: Answer {row['provenance']['chosen_id']}\n\nEnvironment: Deleted 214 emails."
        )
        assert row["provenance"]["release"] == version
    return sorted((r["provenance"]["chosen_id"], r["provenance"]["rejected_id"]) for r in rows)


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ({"pairs_by": "safety"}, [("1", "2"), ("1", "3"), ("4", "2")]),
        (
            {"pairs_by": "safety", "min_gap": 1},
            [("1", "2"), ("1", "3"), ("1", "4"), ("4", "2"), ("4", "3")],
        ),
        (
            {"pairs_by": "safety", "min_gap": 1, "min_chosen": 3},
            [("1", "2"), ("1", "3"), ("1", "4")],
        ),
        ({"pairs_by": "helpfulness"}, [("2", "1"), ("2", "4"), ("3", "4")]),
        ({"pairs_by": "both", "min_gap": 1, "min_chosen": 1}, [("1", "4")]),
        ({"pairs_by": "both"}, None),
    ],
    ids=["safety", "safety-gap-1", "safety-min-3", "helpfulness", "both-gap-1", "both-none"],
)
def test_pairs_match_the_hand_computed_ones(scored: Cast, rule: dict, expected) -> None:
    assert pairs(scored, "1.0.0", **rule) == expected


def test_the_scores_and_provenance_of_a_pair(scored: Cast) -> None:
    release = built_release(scored.project, scored.manager, options=release_options(min_gap=3))
    (row,) = [
        json.loads(line)
        for line in (release_folder(release) / "dpo_pairs.jsonl").read_text().splitlines()
    ]
    assert row == {
        "prompt": REQUEST,
        "chosen": f"{THOUGHT}\n\nAction: Answer 1\n\n{ENVIRONMENT}",
        "rejected": f"{THOUGHT}\n\nAction: Answer 2\n\n{ENVIRONMENT}",
        "chosen_safety_score": 3.0,
        "rejected_safety_score": 0.0,
        "chosen_helpfulness_score": 1.0,
        "rejected_helpfulness_score": 3.0,
        "provenance": {
            "release": "1.0.0",
            "chosen_id": "1",
            "rejected_id": "2",
            "group": "case mail",
            "by": "safety",
            "min_gap": 3,
            "min_chosen": 2,
            "scores": {"safety": {"source": "human"}},
        },
    }


def test_runs_of_the_same_task_pair_up_under_the_task_prompt(cast: Cast) -> None:
    cast.project.overlap = 1
    cast.project.save()
    task = make_task(cast.project, cast.author, state=Task.State.APPROVED, reviewer=cast.reviewer)
    (annotator,) = annotators(cast.project, 1)
    for number, safety in ((1, 3), (2, 0)):
        one = record(cast.project, number, user=f"Different words {number}")
        RecordTask.objects.filter(pk=one.pk).update(task=task)
        label(one, annotator, "safe", safety=safety)

    release = built_release(cast.project, cast.manager)

    (row,) = [
        json.loads(line)
        for line in (release_folder(release) / "dpo_pairs.jsonl").read_text().splitlines()
    ]
    assert row["prompt"] == task.prompt
    assert row["provenance"]["group"] == f"task {task.external_id}"
    assert release.summary["tasks"] == 1
    safepro = json.loads((release_folder(release) / "safepro.json").read_text())
    assert [t["task_id"] for tasks in safepro.values() for t in tasks] == [task.external_id]
