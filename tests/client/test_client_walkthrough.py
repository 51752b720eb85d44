"""docs/client.md's walkthrough, through the client against a live studio and a real worker:
a manager imports an R-Judge file following its progress, annotators label records, a judge
(the fake OpenAI-compatible server) runs over them, and a release is built and downloaded."""

from __future__ import annotations

import csv
import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from studio_client import Progress, StudioClient
from tests.annotation.annotators import add_annotator
from tests.client.conftest import Connect
from tests.conftest import Cast
from tests.fake_llm import MODEL, FakeLLM, answer
from tests.judging.judge_runs import make_connection

pytestmark = pytest.mark.django_db(transaction=True)

SLUG = "agent-safety"


def gold_labels(file: Path) -> Counter[str]:
    return Counter(
        "unsafe" if record["label"] == 1 else "safe" for record in json.loads(file.read_text())
    )


def eventually[T](read: Callable[[], list[T]], seconds: float = 30) -> list[T]:
    """What `read` gives once it gives something, within `seconds`."""
    deadline = time.monotonic() + seconds
    while not (found := read()):
        assert time.monotonic() < deadline, "Nothing came."
        time.sleep(0.2)
    return found


def import_with_progress(manager: StudioClient, file: Path) -> tuple[dict, list[Progress]]:
    seen: list[Progress] = []
    batch = manager.import_file(
        SLUG, file, default_category="Program", on_progress=seen.append, poll_interval=0.2
    )
    return dict(batch), seen


def test_import_labels_a_judge_run_and_a_release_through_the_client(
    cast: Cast, connect: Connect, rjudge_dir: Path, celery_worker: None, tmp_path: Path
) -> None:
    manager = connect(cast.manager)
    file = rjudge_dir / "Program" / "ds_program.json"

    # Import, following the upload and then the worker.
    batch, seen = import_with_progress(manager, file)

    assert (batch["state"], batch["created_count"], batch["category_counts"]) == (
        "succeeded",
        68,
        {"Program": 68},
    )
    uploaded = [p for p in seen if p.state == "uploading"]
    assert uploaded and uploaded[-1].done == uploaded[-1].total == file.stat().st_size
    assert seen[-1].state == "succeeded" and seen[-1].job_id == batch["id"]

    # Every page of the record list, and its filters.
    rows = list(manager.records(SLUG, per_page=25))
    assert len(rows) == 68 == len({row["id"] for row in rows})
    by_gold = {
        label: len(list(manager.records(SLUG, gold_label=label))) for label in ("safe", "unsafe")
    }
    assert by_gold == gold_labels(file)
    assert [r["id"] for r in manager.records(SLUG, sort="-id", per_page=25)] == sorted(
        (row["id"] for row in rows), reverse=True
    )

    # Two annotators label the same three records (overlap 2); they split on the third.
    cast.project.overlap = 2
    cast.project.save()
    labelled = {}
    for username, verdicts in (
        ("ann", ["unsafe", "unsafe", "unsafe"]),
        ("bea", ["unsafe", "unsafe", "safe"]),
    ):
        annotator = connect(add_annotator(cast.project, username))
        for verdict in verdicts:
            lease = annotator.claim(SLUG)
            assert lease is not None and "gold_label" not in lease["record"]
            annotator.submit_label(
                SLUG, lease["id"], verdict, risk_description="Runs a command it was not asked to."
            )
            labelled.setdefault(lease["record"]["id"], []).append(verdict)
        mine = list(annotator.my_labels(SLUG))
        assert [label["verdict"] for label in reversed(mine)] == verdicts
    split = next(record for record, said in labelled.items() if said == ["unsafe", "safe"])

    reviewer = connect(cast.reviewer)
    assert {row["id"] for row in reviewer.records(SLUG, consensus="unsafe")} == set(labelled) - {
        split
    }
    assert [row["id"] for row in reviewer.records(SLUG, labels="done")] == sorted(labelled)
    # A worker looks for disagreements among the labels of the last second.
    (disagreement,) = eventually(lambda: list(reviewer.disagreements(SLUG, record=split)))
    assert sorted(entry["label"] for entry in disagreement["labels"]) == ["safe", "unsafe"]
    reviewer.adjudicate(SLUG, split, "safe", reason="It only reads the file.")
    assert [row["id"] for row in reviewer.records(SLUG, final="safe")] == [split]
    assert [a["record"] for a in reviewer.adjudications(SLUG)] == [split]

    # A judge run over the labelled records, on the fake endpoint an administrator set up.
    with FakeLLM(lambda request: answer("unsafe")) as llm:
        make_connection(llm.base_url, name="Local")
        (connection,) = manager.connections(SLUG)
        judge = manager.create_judge(
            SLUG, name="Fake", protocol="rjudge", connection=connection["id"], model=MODEL
        )
        run = manager.start_run(SLUG, judge["id"], only_labelled=True)
        followed: list[Progress] = []
        run = manager.wait_for_run(SLUG, run["id"], on_progress=followed.append, poll_interval=0.2)

    assert (run["state"], run["done"], run["valid_count"]) == ("succeeded", 3, 3)
    assert followed[-1].done == followed[-1].total == 3
    verdicts = list(manager.verdicts(SLUG, run["id"]))
    assert sorted(v["record"] for v in verdicts) == sorted(labelled)
    assert {v["label"] for v in verdicts} == {"unsafe"}
    judged_unsafe = manager.records(SLUG, run=run["id"], verdict="unsafe")
    assert sorted(row["id"] for row in judged_unsafe) == sorted(labelled)

    # A release of the final labels, built by the worker, downloaded and checked.
    release = manager.create_release(
        SLUG, "1.0.0", license="CC BY 4.0", annotator_labels=True, verdicts=True
    )
    building: list[Progress] = []
    release = manager.wait_for_release(
        SLUG, release["id"], on_progress=building.append, poll_interval=0.2
    )
    assert building[-1].state == "built" and release["built_at"]
    paths = manager.download_release(SLUG, release["id"], tmp_path / "release")

    listed = {entry["name"]: entry for entry in release["files"]}
    assert {path.name for path in paths} == set(listed)
    for path in paths:
        if "sha256" in listed[path.name]:
            assert hashlib.sha256(path.read_bytes()).hexdigest() == listed[path.name]["sha256"]
    # The release holds the labelled records with their final labels, the annotators' labels
    # and the judge's verdicts.
    external = {row["id"]: row["external_id"] for row in rows}
    expected = {external[r]: "safe" if r == split else "unsafe" for r in labelled}
    with (tmp_path / "release" / "labels.csv").open() as table:
        assert {row["id"]: row["label"] for row in csv.DictReader(table)} == expected
    lines = (tmp_path / "release" / "records.jsonl").read_text().splitlines()
    released = {record["id"]: record for record in map(json.loads, lines)}
    assert set(released) == set(expected)
    assert released[external[split]]["label_source"] == "adjudicated"
    for record in released.values():
        assert len(record["annotator_labels"]) == 2
        assert [verdict["label"] for verdict in record["verdicts"]] == ["unsafe"]
