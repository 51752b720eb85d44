"""The record list as judging sees it: curation's columns and filters of what a record is
(curation/record_table.py), and those of what was said about it: its labels (n of k), its
consensus and final label by the project's one rule, its open disagreements, and the verdicts
of judge runs (any run: an LLM judge's, imported verdicts, a panel's).

Every filter here is a condition on the record's own row or a semi-join on an index, so that
counting and paging any of them over 100,000 records stays within the list's budget
(bench/record_list_bench.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.db.models import F, Q, QuerySet
from django.db.models.lookups import GreaterThanOrEqual, LessThan

from curation.models import Project, Record
from curation.record_table import list_rows
from curation.selectors import record_search
from judging import selectors
from judging.models import Disagreement, Verdict

# The runs whose verdicts the list shows as columns: the latest few, and the one filtered by.
RUN_COLUMNS = 3
# The label counts the rows carry, for the columns of labels, consensus and final label.
COUNT_COLUMNS = ("annotation_count", "extra_labels", "safe_votes", "unsafe_votes")
SORTS: dict[str, tuple[str, ...]] = {
    "": ("id",),
    "-id": ("-id",),
    "external_id": ("external_id",),
    "-external_id": ("-external_id",),
    "labels": ("annotation_count", "id"),
    "-labels": ("-annotation_count", "-id"),
}


def run_choices(project: Project) -> list[tuple[int, str]]:
    """The project's runs, newest first, as (id, name), for the run filter."""
    return list(project.judge_runs.order_by("-created_at", "-id").values_list("id", "name"))


def shown_runs(runs: list[tuple[int, str]], chosen: int | None) -> list[tuple[int, str]]:
    """The runs the list shows a column for: the latest RUN_COLUMNS, and the one filtered by."""
    shown = runs[:RUN_COLUMNS]
    shown += [run for run in runs[RUN_COLUMNS:] if run[0] == chosen]
    return shown


def listed_records(project: Project, filters: dict[str, Any]) -> QuerySet[Record]:
    """The project's records that match every filter, in the order asked."""
    records = record_search(
        project,
        category=filters["category"],
        scenario=filters["scenario"],
        gold_label=filters["gold_label"],
        attack_type=filters["attack_type"],
        text=filters["q"],
        agent=filters["agent"],
    ).filter(*_conditions(project, filters))
    if filters["sort"]:
        records = records.order_by(*SORTS[filters["sort"]])
    return records


def _conditions(project: Project, filters: dict[str, Any]) -> list[Q]:
    needed = F("extra_labels") + project.overlap
    by_labels = {
        "none": Q(annotation_count=0),
        "some": Q(annotation_count__gt=0) & Q(LessThan(F("annotation_count"), needed)),
        "done": Q(GreaterThanOrEqual(F("annotation_count"), needed)),
    }
    conditions = []
    if filters["labels"]:
        conditions.append(by_labels[filters["labels"]])
    if filters["consensus"]:
        label = "" if filters["consensus"] == "none" else filters["consensus"]
        conditions.append(selectors.consensus_condition(project, label))
    if filters["final"]:
        label = "" if filters["final"] == "none" else filters["final"]
        conditions.append(selectors.final_condition(project, label))
    if filters["disputed"]:
        disputed = Q(pk__in=_open_disagreements(project).values("record_id"))
        conditions.append(disputed if filters["disputed"] == "yes" else ~disputed)
    if filters["run"] and filters["verdict"]:
        conditions.append(_verdict_condition(filters["run"], filters["verdict"]))
    return conditions


def _open_disagreements(project: Project) -> QuerySet[Disagreement]:
    return Disagreement.objects.filter(project=project, state=Disagreement.State.OPEN)


def _verdict_condition(run_id: int, verdict: str) -> Q:
    verdicts = Verdict.objects.filter(run_id=run_id)
    if verdict == "missing":
        return ~Q(pk__in=verdicts.values("record_id"))
    if verdict in ("safe", "unsafe"):
        verdicts = verdicts.filter(parse_status=Verdict.Parse.VALID, label=verdict)
    else:
        verdicts = verdicts.filter(parse_status=verdict)
    return Q(pk__in=verdicts.values("record_id"))


def record_rows(
    project: Project, page_ids: Sequence[int], runs: list[tuple[int, str]], *, url_prefix: str
) -> list[dict[str, object]]:
    """The rows of one page: curation's columns, then labels (n of k), consensus, final label,
    open disagreements, and each shown run's verdict."""
    rows = list_rows(page_ids, url_prefix=url_prefix, columns=COUNT_COLUMNS)
    if not rows:
        return rows
    ids = [row["id"] for row in rows]
    counts = np.array(
        [
            [
                row["safe_votes"],
                row["unsafe_votes"],
                row["annotation_count"] - row["safe_votes"] - row["unsafe_votes"],
            ]
            for row in rows
        ]
    )
    consensus = selectors.consensus_codes(counts, project.overlap, rule=project.consensus_rule)
    adjudicated = selectors.latest_adjudications(project, ids)
    disputes = _disputes(project, ids)
    verdicts = _verdicts(ids, [run_id for run_id, _ in runs])
    for row, code in zip(rows, consensus.tolist(), strict=True):
        row["labels_needed"] = project.overlap + row["extra_labels"]
        row["consensus"] = selectors.CODE_LABELS.get(code, "")
        adjudication = adjudicated.get(row["id"])
        row["final"] = adjudication or row["consensus"]
        row["adjudicated"] = adjudication is not None
        row["disputes"] = disputes.get(row["id"], [])
        row["verdicts"] = [verdicts.get((row["id"], run_id), "") for run_id, _ in runs]
    return rows


def _disputes(project: Project, ids: list[int]) -> dict[int, list[str]]:
    kinds = dict(Disagreement.Kind.choices)
    rows = _open_disagreements(project).filter(record_id__in=ids).order_by("kind")
    disputes: dict[int, list[str]] = defaultdict(list)
    for record_id, kind in rows.values_list("record_id", "kind"):
        disputes[record_id].append(kinds.get(kind, kind))
    return disputes


def _verdicts(ids: list[int], run_ids: list[int]) -> dict[tuple[int, int], str]:
    """{(record, run): the verdict in words}: its label, its score, or why it has neither."""
    if not run_ids:
        return {}
    rows = (
        Verdict.objects.filter(run_id__in=run_ids, record_id__in=ids)
        .order_by()
        .values_list("record_id", "run_id", "label", "score", "parse_status")
    )
    return {
        (record, run): label or (f"score {score}" if score is not None else status)
        for record, run, label, score, status in rows
    }
