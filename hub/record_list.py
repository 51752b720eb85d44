"""The record list as the hub shows it: curation's columns and filters of what a record is
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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from django.contrib.auth.models import User
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.db.models.lookups import GreaterThanOrEqual, LessThan

from annotation.consensus import CODE_LABELS, consensus_codes, consensus_condition
from annotation.models import Annotation
from curation.errors import DomainError
from curation.models import Project, Record, Role
from curation.record_table import list_rows
from curation.selectors import SEARCH_MATCH_LIMIT, record_search
from judging.models import Verdict, name_shared
from review.models import Disagreement
from review.selectors import final_condition, latest_adjudications

if TYPE_CHECKING:
    from django.db.models.expressions import Combinable, NegatedExpression

# The runs whose verdicts the list shows as columns: the latest few, and the one filtered by.
RUN_COLUMNS = 3
# The label counts the rows carry, for the columns of labels, consensus and final label.
COUNT_COLUMNS = ("annotation_count", "extra_labels", "safe_votes", "unsafe_votes")
# The list's filters (RecordListForm's fields, less its order and page size): what "all that
# match" is computed from.
FILTERS = (
    *("category", "scenario", "gold_label", "attack_type", "agent", "q"),
    *("labels", "consensus", "final", "disputed", "annotator", "run", "verdict"),
)
SORTS: dict[str, tuple[str, ...]] = {
    "": ("id",),
    "-id": ("-id",),
    "external_id": ("external_id",),
    "-external_id": ("-external_id",),
    "labels": ("annotation_count", "id"),
    "-labels": ("-annotation_count", "-id"),
}


def run_choices(project: Project) -> list[tuple[int, str]]:
    """The project's runs, newest first, as (id, name as pages name it), for the run filter."""
    runs = (
        project.judge_runs.annotate(name_is_shared=name_shared())
        .order_by("-created_at", "-id")
        .only("id", "project_id", "name", "created_at")
    )
    return [(run.pk, run.display_name) for run in runs]


def annotator_names(project: Project) -> list[str]:
    """The usernames of the project's annotators, for the "labelled by" filter."""
    members = project.memberships.filter(role=Role.ANNOTATOR)
    return sorted(set(members.values_list("user__username", flat=True)))


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


def _conditions(
    project: Project, filters: dict[str, Any]
) -> list[Q | Exists | NegatedExpression[Combinable]]:
    needed = F("extra_labels") + project.overlap
    by_labels = {
        "none": Q(annotation_count=0),
        "some": Q(annotation_count__gt=0) & Q(LessThan(F("annotation_count"), needed)),
        "done": Q(GreaterThanOrEqual(F("annotation_count"), needed)),
    }
    # Negating an Exists wraps it: `~disputed` below.
    conditions: list[Q | Exists | NegatedExpression[Combinable]] = []
    if filters["labels"]:
        conditions.append(by_labels[filters["labels"]])
    if filters["consensus"]:
        label = "" if filters["consensus"] == "none" else filters["consensus"]
        conditions.append(consensus_condition(project, label))
    if filters["final"]:
        label = "" if filters["final"] == "none" else filters["final"]
        conditions.append(final_condition(project, label))
    if filters["disputed"]:
        # EXISTS rather than IN: PostgreSQL then plans "not disputed" as an anti-join of the
        # two indexes instead of probing a hash of every open disagreement once per record
        # (about a third faster over 100,000 records, docs/benchmarks.md).
        disputed = Exists(_open_disagreements(project).filter(record_id=OuterRef("pk")))
        conditions.append(disputed if filters["disputed"] == "yes" else ~disputed)
    if filters["annotator"]:
        # By id, looked up first: each record's test is then one probe of the label's unique
        # (record, annotator) index, with no join to the users.
        annotator_id = (
            User.objects.filter(username=filters["annotator"]).values_list("id", flat=True).first()
        )
        labelled = Annotation.objects.filter(record_id=OuterRef("pk"), annotator_id=annotator_id)
        conditions.append(Exists(labelled) if annotator_id is not None else Q(pk__in=[]))
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
    elif verdict.startswith("score:"):
        score = int(verdict.removeprefix("score:"))
        verdicts = verdicts.filter(parse_status=Verdict.Parse.VALID, score=score)
    else:
        verdicts = verdicts.filter(parse_status=verdict)
    return Q(pk__in=verdicts.values("record_id"))


def matching_record_ids(project: Project, filters: dict[str, Any]) -> list[int]:
    """Every record that matches the list's `filters` now, in id order: the records a bulk
    action on "all that match" acts on, computed from the filters rather than sent by id."""
    ids = list(listed_records(project, filters).order_by("id").values_list("id", flat=True))
    _refuse_a_capped_search(filters, len(ids))
    return ids


def matching_count(project: Project, filters: dict[str, Any]) -> int:
    """How many records match the list's `filters` now, to be confirmed before acting on all."""
    count = listed_records(project, filters).order_by().count()
    _refuse_a_capped_search(filters, count)
    return count


def _refuse_a_capped_search(filters: dict[str, Any], count: int) -> None:
    # A text search finds at most SEARCH_MATCH_LIMIT + 1 records: beyond that, "all that match"
    # would be some of them, chosen by the index.
    if filters["q"] and count > SEARCH_MATCH_LIMIT:
        raise DomainError(
            f"More than {SEARCH_MATCH_LIMIT} records match the search: narrow it to act on all "
            "the records that match."
        )


@dataclass(frozen=True)
class RunVerdict:
    """A run's verdict on a record: its label, its score, or why it has neither."""

    run_id: int
    run_name: str
    label: str = ""
    score: int | None = None
    # "valid", "invalid", "error", or "" for a record the run has not judged.
    parse_status: str = ""

    @property
    def words(self) -> str:
        if self.label:
            return self.label
        return f"score {self.score}" if self.score is not None else self.parse_status


@dataclass(frozen=True)
class Opinions:
    """What the list says of one record beyond what it is made of: the page and the API alike."""

    labels_given: int
    labels_needed: int
    consensus: str
    final: str
    adjudicated: bool
    # The kinds of its open disagreements.
    disputes: list[str]
    verdicts: list[RunVerdict]


def opinions(
    project: Project, counts: Sequence[dict[str, Any]], runs: list[tuple[int, str]]
) -> dict[int, Opinions]:
    """{record id: its Opinions} for the records of one page, each given as its `id` and the
    label counts it keeps (COUNT_COLUMNS): a fixed number of queries, whatever the page's size."""
    if not counts:
        return {}
    ids = [row["id"] for row in counts]
    votes = np.array(
        [
            [
                row["safe_votes"],
                row["unsafe_votes"],
                row["annotation_count"] - row["safe_votes"] - row["unsafe_votes"],
            ]
            for row in counts
        ]
    )
    consensus = consensus_codes(votes, project.overlap, rule=project.consensus_rule)
    adjudicated = latest_adjudications(project, ids)
    disputes = _disputes(project, ids)
    verdicts = _verdicts(ids, runs)
    said = {}
    for row, code in zip(counts, consensus.tolist(), strict=True):
        label = CODE_LABELS.get(code, "")
        adjudication = adjudicated.get(row["id"])
        said[row["id"]] = Opinions(
            labels_given=row["annotation_count"],
            labels_needed=project.overlap + row["extra_labels"],
            consensus=label,
            final=adjudication or label,
            adjudicated=adjudication is not None,
            disputes=disputes.get(row["id"], []),
            verdicts=[
                verdicts.get((row["id"], run_id), RunVerdict(run_id, name)) for run_id, name in runs
            ],
        )
    return said


def record_rows(
    project: Project, page_ids: Sequence[int], runs: list[tuple[int, str]], *, url_prefix: str
) -> list[dict[str, object]]:
    """The rows of one page: curation's columns, then labels (n of k), consensus, final label,
    open disagreements, and each shown run's verdict."""
    rows = list_rows(page_ids, url_prefix=url_prefix, columns=COUNT_COLUMNS)
    said = opinions(project, rows, runs)
    kinds = dict(Disagreement.Kind.choices)
    for row in rows:
        # list_rows gives each row its record's id, an int, among columns of any type.
        record = said[cast(int, row["id"])]
        row["labels_needed"] = record.labels_needed
        row["consensus"] = record.consensus
        row["final"] = record.final
        row["adjudicated"] = record.adjudicated
        row["disputes"] = [kinds.get(kind, kind) for kind in record.disputes]
        row["verdicts"] = [verdict.words for verdict in record.verdicts]
    return rows


def _disputes(project: Project, ids: list[int]) -> dict[int, list[str]]:
    rows = _open_disagreements(project).filter(record_id__in=ids).order_by("kind")
    disputes: dict[int, list[str]] = defaultdict(list)
    for record_id, kind in rows.values_list("record_id", "kind"):
        disputes[record_id].append(kind)
    return disputes


def _verdicts(ids: list[int], runs: list[tuple[int, str]]) -> dict[tuple[int, int], RunVerdict]:
    """{(record, run): its verdict} for the records and runs that have one."""
    if not runs:
        return {}
    names = dict(runs)
    rows = (
        Verdict.objects.filter(run_id__in=list(names), record_id__in=ids)
        .order_by()
        .values_list("record_id", "run_id", "label", "score", "parse_status")
    )
    return {
        (record, run): RunVerdict(run, names[run], label, score, status)
        for record, run, label, score, status in rows
    }
