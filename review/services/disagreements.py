"""Finding where labels disagree, each time verdicts or a label arrive.

Five kinds, per record (Disagreement.Kind): annotators split (two or more annotators, not all
of the same verdict, "unsure" included); judge vs humans (a judge's valid label differs from the
human consensus); judge vs judge (two runs' valid labels differ); humans vs gold (the consensus
differs from the source's gold label); score gap (two 0-3 scores on the same scale, from
annotators or judges, two or more apart).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

import numpy as np
import orjson
from django.db import connection, transaction
from django.db.models import F, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from annotation.consensus import CODE_LABELS, SCALES, LabelRows, consensus_codes, label_rows
from curation.arrays import InArray, code_of, fetch_rows, int_matrix
from curation.models import Project, Record
from curation.selectors import usernames
from judging.models import JudgeRun, name_shared
from judging.selectors import VerdictRows, run_protocol, run_score_scale, verdict_rows
from review.models import Disagreement, PendingCheck
from stats import metrics

Kind = Disagreement.Kind
State = Disagreement.State

# The first key of the per-project advisory lock detection and adjudication take (the second
# is the project's id).
DETECTION_LOCK = 7201
# Entry keys: an annotator's or a run's id times this, plus the label's code (0 to 2).
_KEY = 4
# Records per transaction: large enough that a whole project takes few queries, small enough
# that the rows in memory stay modest.
CHUNK = 100_000


class Change(NamedTuple):
    """A disagreement to write, new or changed. `labels` is the JSON of who said what, and the
    weight is how many said something (annotators, runs, the gold label): the queue's order."""

    record: int
    kind: str
    labels: str
    weight: int
    state: str
    resolved_at: datetime | None


def detect_disagreements(*, project_id: int, record_ids: list[int]) -> None:
    """Flag these records' disagreements, and resolve those of theirs that no longer hold.

    A few queries per chunk of records, whatever their labels and verdicts; rows are written
    only where something changed. A resolved disagreement opens again only when the opinions
    involved change: one a reviewer settled stays settled until a label or verdict is added or
    changed. Safe to run twice and concurrently: detections of a project take turns.
    """
    ids = sorted(set(record_ids))
    for start in range(0, len(ids), CHUNK):
        with transaction.atomic():
            lock_project_for_detection(project_id)
            _detect(project_id, ids[start : start + CHUNK])


def detect_pending(*, project_id: int) -> None:
    """Check the project's records whose labels changed since they were last checked (see
    `PendingCheck`).

    Each batch's marks are taken in the transaction that checks the batch: a check that fails
    leaves them for the next one.
    """
    while True:
        with transaction.atomic():
            lock_project_for_detection(project_id)
            record_ids = _take_pending(project_id)
            if not record_ids:
                return
            _detect(project_id, record_ids)


def _take_pending(project_id: int) -> list[int]:
    """Remove up to CHUNK of the project's pending marks; their records."""
    pending = PendingCheck.objects.filter(project_id=project_id)
    record_ids = sorted(pending.values_list("record_id", flat=True)[:CHUNK])
    if not record_ids:
        return []
    # A label marking one of these records meanwhile waits for this transaction, then marks
    # it again (see review.receivers.detect_on_label).
    PendingCheck.objects.filter(InArray(F("record_id"), record_ids)).delete()
    return record_ids


def lock_project_for_detection(project_id: int) -> None:
    """Let one detection or adjudication at a time change a project's disagreements, until its
    transaction ends: each reads the labels and writes what follows from them, and two at once
    could write what follows from stale labels. SQLite writes one transaction at a time anyway.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [DETECTION_LOCK, project_id])


def _detect(project_id: int, record_ids: list[int]) -> None:
    overlap, rule = Project.objects.values_list("overlap", "consensus_rule").get(pk=project_id)
    opinions = Opinions.load(project_id, record_ids)
    existing: dict[str, dict[int, tuple[int, str, str]]] = {kind: {} for kind in Kind.values}
    rows = (
        Disagreement.objects.filter(InArray(F("record_id"), opinions.records))
        .order_by()
        .values_list("id", "record_id", "kind", "state", Cast("labels", TextField()))
    )
    for pk, record, kind, state, labels in fetch_rows(rows):
        existing[kind][record] = (pk, state, labels)
    now = timezone.now()
    new, changed = [], []
    for kind, flagged in opinions.disagreements(overlap, rule).items():
        before = existing[kind]
        for index in np.flatnonzero(flagged).tolist():
            record = opinions.records[index]
            labels, weight = opinions.labels(kind, index)
            if record not in before:
                new.append(Change(record, kind, labels, weight, State.OPEN, None))
                continue
            pk, state, stored = before.pop(record)
            # Unchanged opinions: still open, or still settled by a reviewer. The column keeps
            # the text as detection wrote it, so equal texts spare parsing both.
            if stored != labels and orjson.loads(stored) != orjson.loads(labels):
                changed.append((pk, Change(record, kind, labels, weight, State.OPEN, None)))
        for record, (pk, state, _) in before.items():
            if state == State.OPEN:
                # No longer in disagreement: resolved, with the opinions that now agree, so
                # that the same disagreement coming back is a change again.
                labels, weight = opinions.labels(kind, opinions.index[record])
                changed.append((pk, Change(record, kind, labels, weight, State.RESOLVED, now)))
    _save(project_id, new, changed, now)


def _save(
    project_id: int, new: list[Change], changed: list[tuple[int, Change]], now: datetime
) -> None:
    """Insert the new disagreements and update the changed ones (the lock keeps others from
    adding any meanwhile)."""
    if connection.vendor == "postgresql":
        _copy(project_id, new, changed, now)
        return
    Disagreement.objects.bulk_create(_model(project_id, change, pk=None, now=now) for change in new)
    Disagreement.objects.bulk_update(
        [_model(project_id, change, pk=pk, now=now) for pk, change in changed],
        ["labels", "weight", "state", "resolved_at", "updated_at"],
    )


def _model(project_id: int, change: Change, *, pk: int | None, now: datetime) -> Disagreement:
    return Disagreement(
        pk=pk,
        project_id=project_id,
        record_id=change.record,
        kind=change.kind,
        labels=orjson.loads(change.labels),
        weight=change.weight,
        state=change.state,
        resolved_at=change.resolved_at,
        updated_at=now,
    )


def _copy(
    project_id: int, new: list[Change], changed: list[tuple[int, Change]], now: datetime
) -> None:
    """PostgreSQL takes rows through COPY many times faster than through INSERT or UPDATE
    statements, whose parameters the driver quotes one by one."""
    table = connection.ops.quote_name(Disagreement._meta.db_table)
    columns = "record_id, kind, labels, weight, state, resolved_at"
    stamps = f"\t{now.isoformat()}\t{now.isoformat()}"
    with connection.cursor() as cursor:
        if new:
            statement = f"COPY {table} (project_id, {columns}, created_at, updated_at) FROM STDIN"
            with cursor.copy(statement) as copy:
                copy.write("".join(_copy_line(project_id, change, stamps) for change in new))
        if not changed:
            return
        cursor.execute("DROP TABLE IF EXISTS pg_temp.disagreement_change")
        cursor.execute(
            "CREATE TEMPORARY TABLE disagreement_change (id bigint, record_id bigint,"
            " kind varchar(20), labels json, weight integer, state varchar(10),"
            " resolved_at timestamptz) ON COMMIT DROP"
        )
        with cursor.copy(f"COPY disagreement_change (id, {columns}) FROM STDIN") as copy:
            copy.write("".join(_copy_line(pk, change, "") for pk, change in changed))
        cursor.execute(
            f"UPDATE {table} AS d SET labels = c.labels, weight = c.weight,"  # noqa: S608 (a model's table)
            " state = c.state, resolved_at = c.resolved_at, updated_at = %s"
            " FROM disagreement_change AS c WHERE d.id = c.id",
            [now],
        )


def _copy_line(first: int, change: Change, rest: str) -> str:
    """A change as a line of COPY's text format, after the `first` column and before `rest`.

    JSON holds no raw tab or newline; its backslashes are doubled, as the format wants.
    """
    labels = change.labels.replace("\\", "\\\\")
    resolved = change.resolved_at.isoformat() if change.resolved_at else "\\N"
    return (
        f"{first}\t{change.record}\t{change.kind}\t{labels}\t{change.weight}"
        f"\t{change.state}\t{resolved}{rest}\n"
    )


@dataclass(frozen=True)
class Opinions:
    """Who said what about a chunk of records: labels and verdicts sorted by record, in arrays
    for the checks, and as the JSON of each entry of a disagreement's labels, written out once
    per label or verdict however many disagreements list it."""

    records: list[int]
    index: dict[int, int]
    gold: np.ndarray
    # Annotations by record then annotator: label_bounds[i]:label_bounds[i + 1] are record i's.
    label_rows: LabelRows
    label_item: np.ndarray
    label_bounds: list[int]
    # Verdicts by record then run, likewise, with the scale of each run's scores.
    verdict_rows: VerdictRows
    verdict_item: np.ndarray
    verdict_bounds: list[int]
    verdict_scale: np.ndarray
    # Per record, the entries of its annotators' verdicts and of its judges' valid labels, each
    # joined with commas, and how many there are; its gold label's entry ("" for none).
    people: list[str]
    people_count: list[int]
    judges: list[str]
    judge_count: list[int]
    gold_entries: list[str]
    # The entries of the scores of the annotations and verdicts that have any, by row.
    label_score_entries: dict[int, list[str]]
    verdict_score_entries: dict[int, str]

    @classmethod
    def load(cls, project_id: int, record_ids: list[int]) -> Opinions:
        gold_code = code_of("gold_label", metrics.VERDICT_CODES, metrics.MISSING)
        records_gold = int_matrix(
            Record.objects.filter(project_id=project_id)
            .filter(InArray(F("id"), record_ids))
            .order_by("id")
            .values_list("id", gold_code),
            2,
        )
        records = records_gold[:, 0].tolist()
        labels = label_rows(project_id, records)
        verdicts = verdict_rows(record_ids=records)
        label_item = np.searchsorted(records_gold[:, 0], labels.record)
        verdict_item = np.searchsorted(records_gold[:, 0], verdicts.record)
        by_label = np.lexsort((labels.annotator, label_item))
        by_verdict = np.lexsort((verdicts.run, verdict_item))
        labels, label_item = _take(labels, by_label), label_item[by_label]
        verdicts, verdict_item = _take(verdicts, by_verdict), verdict_item[by_verdict]
        names = usernames(np.unique(labels.annotator).tolist())
        runs = _runs(np.unique(verdicts.run).tolist())
        run_ids = verdicts.run.tolist()
        scale = np.array([runs[r][1] for r in run_ids], dtype=np.int64)
        every = np.arange(len(records) + 1)
        label_bounds = np.searchsorted(label_item, every)
        valid = verdicts.label <= metrics.UNSAFE
        judge_bounds = np.searchsorted(verdict_item[valid], every)
        people = _entries(
            labels.annotator * _KEY + labels.verdict,
            lambda key: _entry(
                source="annotator",
                name=names[key // _KEY],
                label=CODE_LABELS[key % _KEY],
            ),
        )
        judges = _entries(
            verdicts.run[valid] * _KEY + verdicts.label[valid],
            lambda key: _entry(
                source="judge",
                name=runs[key // _KEY][0],
                run=key // _KEY,
                label=CODE_LABELS[key % _KEY],
            ),
        )
        return cls(
            records=records,
            index={record: i for i, record in enumerate(records)},
            gold=records_gold[:, 1],
            label_rows=labels,
            label_item=label_item,
            label_bounds=label_bounds.tolist(),
            verdict_rows=verdicts,
            verdict_item=verdict_item,
            verdict_bounds=np.searchsorted(verdict_item, every).tolist(),
            verdict_scale=scale,
            people=_joined(people, label_bounds),
            people_count=np.diff(label_bounds).tolist(),
            judges=_joined(judges, judge_bounds),
            judge_count=np.diff(judge_bounds).tolist(),
            gold_entries=_entries(
                records_gold[:, 1],
                lambda code: (
                    _entry(source="gold", name="gold label", label=CODE_LABELS[code])
                    if code != metrics.MISSING
                    else ""
                ),
            ).tolist(),
            label_score_entries=_label_score_entries(labels, names),
            verdict_score_entries={
                row: _entry(
                    source="judge",
                    name=runs[run_ids[row]][0],
                    run=run_ids[row],
                    scale=SCALES[int(scale[row])],
                    score=int(verdicts.score[row]),
                )
                for row in np.flatnonzero(verdicts.score != metrics.MISSING).tolist()
            },
        )

    def disagreements(self, overlap: int, rule: str) -> dict[str, np.ndarray]:
        """Per kind, which of the records are in disagreement (a boolean array)."""
        n = len(self.records)
        counts = metrics.category_counts(self.label_item, self.label_rows.verdict, n, 3)
        rated = counts.sum(axis=1)
        consensus = consensus_codes(counts, overlap, rule=rule)
        label = self.verdict_rows.label
        valid = np.where(label <= metrics.UNSAFE, label, metrics.MISSING)
        judged = metrics.category_counts(self.verdict_item, valid, n, 2)
        other = judged[np.arange(n), np.where(consensus == metrics.SAFE, metrics.UNSAFE, 0)]
        return {
            Kind.ANNOTATORS_SPLIT: (rated >= 2) & (counts.max(axis=1) < rated),
            Kind.JUDGE_VS_HUMANS: (consensus != metrics.MISSING) & (other > 0),
            Kind.JUDGE_VS_JUDGE: (judged > 0).all(axis=1),
            Kind.HUMANS_VS_GOLD: (consensus != metrics.MISSING)
            & (self.gold != metrics.MISSING)
            & (consensus != self.gold),
            Kind.SCORE_GAP: self._score_gaps(),
        }

    def _score_gaps(self) -> np.ndarray:
        n = len(self.records)
        gap = np.zeros(n, dtype=bool)
        for scale in range(len(SCALES)):
            judged = self.verdict_scale == scale
            items = np.concatenate((self.label_item, self.verdict_item[judged]))
            scores = np.concatenate(
                (self.label_rows.scores[:, scale], self.verdict_rows.score[judged])
            )
            present = metrics.category_counts(items, scores, n, metrics.SCORE_CATEGORIES) > 0
            lowest = present.argmax(axis=1)
            highest = metrics.SCORE_CATEGORIES - 1 - present[:, ::-1].argmax(axis=1)
            gap |= present.any(axis=1) & (highest - lowest >= 2)
        return gap

    def labels(self, kind: str, index: int) -> tuple[str, int]:
        """Who said what on record `index` for a disagreement of `kind`: the JSON list of
        entries, and how many there are."""
        if kind == Kind.ANNOTATORS_SPLIT:
            return f"[{self.people[index]}]", self.people_count[index]
        if kind == Kind.JUDGE_VS_JUDGE:
            return f"[{self.judges[index]}]", self.judge_count[index]
        if kind == Kind.JUDGE_VS_HUMANS:
            parts = (self.people[index], self.judges[index])
            count = self.people_count[index] + self.judge_count[index]
        elif kind == Kind.HUMANS_VS_GOLD:
            parts = (self.people[index], self.gold_entries[index])
            count = self.people_count[index] + bool(self.gold_entries[index])
        else:
            annotations = range(self.label_bounds[index], self.label_bounds[index + 1])
            verdicts = range(self.verdict_bounds[index], self.verdict_bounds[index + 1])
            entries = [e for row in annotations for e in self.label_score_entries.get(row, ())]
            entries += [
                self.verdict_score_entries[row]
                for row in verdicts
                if row in self.verdict_score_entries
            ]
            return "[" + ",".join(entries) + "]", len(entries)
        return "[" + ",".join(part for part in parts if part) + "]", count


def _entry(**fields: object) -> str:
    return orjson.dumps(fields).decode()


def _entries(keys: np.ndarray, render: Callable[[int], str]) -> np.ndarray:
    """render(key) for each of the integer `keys`, rendered once per distinct key: few people
    and runs give many labels."""
    distinct, inverse = np.unique(keys, return_inverse=True)
    rendered = np.empty(len(distinct), dtype=object)
    rendered[:] = [render(key) for key in distinct.tolist()]
    return rendered[inverse.reshape(-1)]


def _joined(entries: np.ndarray, bounds: np.ndarray) -> list[str]:
    """Per record, its entries (entries[bounds[i]:bounds[i + 1]]) joined with commas."""
    items, ends = entries.tolist(), bounds.tolist()
    return [",".join(items[start:end]) for start, end in itertools.pairwise(ends)]


def _label_score_entries(labels: LabelRows, usernames: dict[int, str]) -> dict[int, list[str]]:
    """The entries of the annotations' scores, for the annotations that have any."""
    entries: dict[int, list[str]] = {}
    rows, scales = np.nonzero(labels.scores != metrics.MISSING)
    for row, scale in zip(rows.tolist(), scales.tolist(), strict=True):
        entries.setdefault(row, []).append(
            _entry(
                source="annotator",
                name=usernames[int(labels.annotator[row])],
                scale=SCALES[scale],
                score=int(labels.scores[row, scale]),
            )
        )
    return entries


def _take(rows, order: np.ndarray):
    """The same rows (a LabelRows or VerdictRows) in another order."""
    return type(rows)(**{name: value[order] for name, value in vars(rows).items()})


def _runs(ids: list[int]) -> dict[int, tuple[str, int]]:
    """{run id: (name as pages name it, the scale of its scores)}."""
    runs = (
        JudgeRun.objects.filter(pk__in=ids)
        .annotate(name_is_shared=name_shared())
        .select_related("judge")
    )
    return {run.pk: (run.display_name, run_score_scale(run_protocol(run))) for run in runs}
