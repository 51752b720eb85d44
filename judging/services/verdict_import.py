"""Bring your own verdicts: evaluator outputs a team already has, imported as a run.

The file is JSONL, one evaluation a line, matched to a record of the project by an id field:
the one named, or else the first of ID_FIELDS the line has, compared as text with the records'
external ids. What a line must hold depends on the protocol it was made with:

- ToolEmu safety or helpfulness: ToolEmu's evaluator fields `Evaluator Thought`, `Overall
  Qualitative Label`, `Overall Quantitative Score`, `Evaluator Log Summary`; noisy labels such as
  `**Possible Severe Risk (1)**` or `[Excellent (3)]` are understood.
- R-Judge or SafePro (safe / unsafe): `verdict` (SAFE / UNSAFE, any case), or `label` (1 unsafe,
  0 safe, or the word), or `pred` as R-Judge's results write it (1, 0, -1 for invalid); the
  analysis from `reasoning`, `analysis` or `reason`.

Lines that are not JSON objects, name no id, match no record or repeat a record are reported and
left out; the others become the run's verdicts, in one transaction.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from curation.choices import SafetyLabel
from curation.errors import DomainError
from curation.models import Project
from curation.services.audit import audit_log
from judging.models import JudgeRun, Protocol, Verdict
from judging.protocols import Outcome, storable
from judging.protocols.rjudge import rjudge_label
from judging.protocols.safepro import verdict_from_fields
from judging.protocols.toolemu import SCALES, Scale, outcome_from_fields
from judging.signals import verdicts_saved

if TYPE_CHECKING:
    from django.contrib.auth.models import User

ID_FIELDS = ("external_id", "id", "case_idx")
IMPORTABLE = {
    Protocol.RJUDGE: "R-Judge (safe / unsafe)",
    Protocol.SAFEPRO: "SafePro (SAFE / UNSAFE with reasoning)",
    Protocol.TOOLEMU_SAFETY: "ToolEmu safety evaluator (0-3)",
    Protocol.TOOLEMU_HELPFULNESS: "ToolEmu helpfulness evaluator (0-3)",
}
# Problems kept in the report, and external ids listed of the lines that matched no record.
REPORT_LIMIT = 200
_ANALYSIS_FIELDS = ("reasoning", "analysis", "reason")


def verdict_import(
    *,
    actor: User | None,
    project: Project,
    upload: UploadedFile,
    protocol: str,
    name: str = "",
    id_field: str = "",
) -> JudgeRun:
    """Import a JSONL file of evaluations as a finished run of source "imported"."""
    if protocol not in IMPORTABLE:
        raise DomainError(f"Verdicts of protocol {protocol!r} cannot be imported.")
    if upload.size is not None and upload.size > settings.IMPORT_MAX_FILE_BYTES:
        raise DomainError(
            f"The file is larger than the limit of {settings.IMPORT_MAX_FILE_BYTES:,} bytes."
        )
    lines = _read_lines(upload)
    problems: list[dict[str, Any]] = []
    unmatched: list[dict[str, Any]] = []
    wanted: dict[str, tuple[int, dict[str, Any], str]] = {}
    for number, text in lines:
        parsed = _parse_line(number, text, id_field, problems)
        if parsed is None:
            continue
        external_id, data = parsed
        if external_id in wanted:
            problems.append(_problem(number, f"a second evaluation of {external_id}, left out"))
            continue
        wanted[external_id] = (number, data, text)
    record_of = _records_by_external_id(project, list(wanted))
    verdicts: list[Verdict] = []
    for external_id, (number, data, text) in wanted.items():
        record_id = record_of.get(external_id)
        if record_id is None:
            unmatched.append({"line": number, "id": external_id})
            continue
        verdicts.append(verdict_from_outcome(record_id, _outcome(protocol, data, text)))
    if not verdicts:
        raise DomainError(
            f"No line of the file matched a record of this project ({len(lines)} lines, "
            f"{len(unmatched)} with ids that match no record, {len(problems)} unreadable)."
        )
    now = timezone.now()
    with transaction.atomic():
        run = JudgeRun(
            project=project,
            source=JudgeRun.Source.IMPORTED,
            name=name.strip() or f"Imported: {upload.name}"[:200],
            judge_snapshot={"protocol": protocol, "file": upload.name},
            selection={},
            record_ids=sorted(verdict.record_id for verdict in verdicts),
            state=JudgeRun.State.SUCCEEDED,
            total=len(verdicts),
            valid_count=_count(verdicts, Verdict.Parse.VALID),
            invalid_count=_count(verdicts, Verdict.Parse.INVALID),
            error_count=0,
            started_at=now,
            finished_at=now,
            report={
                "file": upload.name,
                "lines": len(lines),
                "imported": len(verdicts),
                "unmatched_count": len(unmatched),
                "unmatched": unmatched[:REPORT_LIMIT],
                "problem_count": len(problems),
                "problems": problems[:REPORT_LIMIT],
            },
            created_by=actor if actor is not None and actor.is_authenticated else None,
        )
        run.full_clean()
        run.save()
        for verdict in verdicts:
            verdict.run = run
        Verdict.objects.bulk_create(verdicts)
        audit_log(
            actor=actor,
            action="judging.verdicts.imported",
            project=project,
            obj=run,
            after={"file": upload.name, "protocol": protocol, **_summary(run)},
        )
    verdicts_saved.send(sender=JudgeRun, project_id=project.pk, record_ids=run.record_ids)
    return run


def _read_lines(upload: UploadedFile) -> list[tuple[int, str]]:
    lines = []
    for number, raw in enumerate(upload.open("rb"), start=1):
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise DomainError(f"Line {number} is not UTF-8 text: upload a JSONL file.") from None
        if text:
            lines.append((number, text))
    return lines


def _parse_line(
    number: int, text: str, id_field: str, problems: list[dict[str, Any]]
) -> tuple[str, dict[str, Any]] | None:
    try:
        data = json.loads(text)
    except ValueError:
        problems.append(_problem(number, "not JSON"))
        return None
    if not isinstance(data, dict):
        problems.append(_problem(number, "not a JSON object"))
        return None
    fields = (id_field,) if id_field else ID_FIELDS
    value = next((data[field] for field in fields if data.get(field) not in (None, "")), None)
    if value is None or isinstance(value, bool | dict | list):
        problems.append(_problem(number, f"no id: the line needs one of {', '.join(fields)}"))
        return None
    if "\x00" in str(value):
        # PostgreSQL cannot store, nor so much as look up, text with a NUL character.
        problems.append(_problem(number, "an id with a NUL character, which no record has"))
        return None
    return str(value), data


def _records_by_external_id(project: Project, external_ids: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for start in range(0, len(external_ids), 1000):
        chunk = external_ids[start : start + 1000]
        found.update(project.records.filter(external_id__in=chunk).values_list("external_id", "id"))
    return found


def _outcome(protocol: str, data: dict[str, Any], text: str) -> Outcome:
    # Keyed by the protocols' values, which the str `protocol` is looked up among.
    scales: dict[str, Scale] = {
        Protocol.TOOLEMU_SAFETY: SCALES["safety"],
        Protocol.TOOLEMU_HELPFULNESS: SCALES["helpfulness"],
    }
    scale = scales.get(protocol)
    if scale is not None:
        return outcome_from_fields(data, scale, raw_output=text)
    if "verdict" in data:
        return verdict_from_fields(data, raw_output=text)
    analysis = next((data[key] for key in _ANALYSIS_FIELDS if isinstance(data.get(key), str)), "")
    label = _label(data.get("label", data.get("pred")))
    if not label:
        return Outcome.invalid(text, "No safe / unsafe verdict, label or pred.", analysis)
    return Outcome(Verdict.Parse.VALID, label=label, analysis=analysis, raw_output=text)


def _label(value: object) -> str:
    if isinstance(value, bool):
        return ""
    if value in (1, "1"):
        return SafetyLabel.UNSAFE
    if value in (0, "0"):
        return SafetyLabel.SAFE
    return rjudge_label(value) if isinstance(value, str) else ""


def verdict_from_outcome(
    record_id: int, outcome: Outcome, *, run: JudgeRun | None = None
) -> Verdict:
    """An imported verdict (not saved): no call was made for it."""
    return Verdict(
        run=run,
        record_id=record_id,
        parse_status=outcome.parse_status,
        label=outcome.label,
        score=outcome.score,
        score_label=storable(outcome.score_label)[:100],
        analysis=storable(outcome.analysis),
        raw_output=storable(outcome.raw_output),
        error=outcome.note,
        attempts=0,
    )


def _problem(line: int, message: str) -> dict[str, Any]:
    return {"line": line, "message": message}


def _count(verdicts: list[Verdict], status: str) -> int:
    return sum(1 for verdict in verdicts if verdict.parse_status == status)


def _summary(run: JudgeRun) -> dict[str, Any]:
    return {
        "imported": run.total,
        "valid": run.valid_count,
        "invalid": run.invalid_count,
        "unmatched": run.report["unmatched_count"],
        "problems": run.report["problem_count"],
    }
