"""The record list's records with their labels as they stand now, as JSON Lines or CSV: an
export at any time, of the records the list's filters match, streamed, with no release made.

A release freezes what it holds and is built by a worker; this is the working view a team pulls
into a notebook or a spreadsheet between releases. Each record carries what the list and the
record page say of it: the human consensus and the final label by the project's rule, the
annotators' labels, the annotators' mean scores and a reviewer's settled scores.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable, Iterator
from itertools import batched
from statistics import fmean
from typing import Any

import orjson
from django.http import HttpResponseBase, StreamingHttpResponse
from django.utils import timezone

from annotation.consensus import SCALES, human_consensus
from annotation.models import Annotation
from curation.models import Project, Record
from review.selectors import final_labels, settled_scores

# Records read, with their labels, per round trip: memory stays flat whatever the project's size.
EXPORT_CHUNK = 1000
CSV_COLUMNS = (
    "id",
    "category",
    "scenario",
    "source_agent",
    "gold_label",
    "labels",
    "consensus",
    "final_label",
    "final_source",
    *(f"mean_{scale}_score" for scale in SCALES),
    *(f"settled_{scale}_score" for scale in SCALES),
)
# A cell a spreadsheet would run as a formula: record text is hostile (OWASP's CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def export_records(project: Project, record_ids: Iterable[int]) -> Iterator[dict[str, Any]]:
    """Each record, in the order given, with its labels as they stand."""
    for chunk in batched(record_ids, EXPORT_CHUNK):
        ids = list(chunk)
        consensus = human_consensus(project, ids)
        finals = final_labels(project, ids)
        labels = _labels(ids)
        settled = settled_scores(project, ids)
        records = (
            Record.objects.filter(pk__in=ids)
            .order_by("id")
            .values_list(
                "pk",
                "external_id",
                "category__name",
                "scenario__name",
                "source_agent",
                "gold_label",
            )
        )
        by_id = {row[0]: row for row in records}
        for record_id in ids:
            _, external_id, category, scenario, agent, gold_label = by_id[record_id]
            mine = labels.get(record_id, [])
            final = finals.get(record_id)
            yield {
                "id": external_id,
                "category": category,
                "scenario": scenario,
                "source_agent": agent,
                "gold_label": gold_label,
                "consensus": consensus.get(record_id, ""),
                "final_label": final[0] if final else "",
                "final_source": final[1] if final else "",
                "mean_scores": {scale: _mean(mine, scale) for scale in SCALES},
                "settled_scores": {
                    scale: settled.get(record_id, {}).get(scale) for scale in SCALES
                },
                "labels": mine,
            }


def jsonl_lines(records: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    for record in records:
        yield orjson.dumps(record) + b"\n"


def csv_lines(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """One record a row (its labels counted, their scores as means), header first."""
    buffer = io.StringIO()
    table = csv.writer(buffer, lineterminator="\n")

    def line(row: Iterable[Any]) -> str:
        table.writerow(row)
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    yield line(CSV_COLUMNS)
    for record in records:
        yield line(
            _cell(value)
            for value in (
                record["id"],
                record["category"],
                record["scenario"],
                record["source_agent"],
                record["gold_label"],
                len(record["labels"]),
                record["consensus"],
                record["final_label"],
                record["final_source"],
                *(record["mean_scores"][scale] for scale in SCALES),
                *(record["settled_scores"][scale] for scale in SCALES),
            )
        )


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _labels(record_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    rows = (
        Annotation.objects.filter(record_id__in=record_ids)
        .order_by("record_id", "created_at", "id")
        .values_list(
            "record_id",
            "annotator__username",
            "verdict",
            "risk_description",
            "safety_score",
            "helpfulness_score",
            "evidence_turns",
            "created_at",
        )
    )
    labels: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for record_id, annotator, verdict, description, safety, helpfulness, evidence, at in rows:
        labels[record_id].append(
            {
                "annotator": annotator,
                "verdict": verdict,
                "risk_description": description,
                "safety_score": safety,
                "helpfulness_score": helpfulness,
                "evidence_turns": evidence,
                "created_at": at.isoformat(),
            }
        )
    return labels


def _mean(labels: list[dict[str, Any]], scale: str) -> float | None:
    scores = [label[f"{scale}_score"] for label in labels if label[f"{scale}_score"] is not None]
    return round(fmean(scores), 4) if scores else None


# The export's formats: content type, and the lines of a record stream.
FORMATS = {"jsonl": "application/jsonl", "csv": "text/csv; charset=utf-8"}


def export_response(project: Project, record_ids: list[int], file_format: str) -> HttpResponseBase:
    """The records as a download, written as they are read."""
    records = export_records(project, record_ids)
    lines = jsonl_lines(records) if file_format == "jsonl" else csv_lines(records)
    response = StreamingHttpResponse(lines, content_type=FORMATS[file_format])
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    name = f"{project.slug}-labels-{stamp}.{file_format}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
