"""Inspect eval logs (`.eval` and `.json`): the only code that knows their samples.

Logs are read with Inspect's own reader (`inspect_ai.log`), so that every format version
Inspect reads is read here too; `.eval` logs a sample at a time, so that a large log is never
whole in memory. Each sample, of each epoch, becomes a record: its messages are the turns
(`curation.formats.chat`), the task is its category, the sample its case and scenario, the
epoch its replicate and the model its source agent. Its scores are handed on, one run per task
and scorer (judging keeps them).

What is stored of a sample is its identity, messages, target, metadata and error, as Inspect
dumps them (without the events, which repeat the messages, nor the scores, which become
verdicts): the one copy kept, from which the turns are read back when shown, without Inspect.
"""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from curation.choices import SourceFormat
from curation.formats.chat import Message, ToolCall, Turn, chat_turns
from curation.formats.rjudge import (
    EXTERNAL_ID_MAX_LENGTH,
    TEXT_FIELDS,
    InvalidRecord,
    NormalisedRecord,
)
from curation.formats.toolemu import SOURCE_MAX_LENGTH

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

LOG_SUFFIXES = (".eval", ".json")
# What a record keeps of its sample; the rest (events, scores, usage, timings) is not kept.
_KEPT = {"id", "epoch", "uuid", "target", "messages", "metadata", "error", "limit"}
# Identity, left out of the content hash: the same conversation in two epochs is a duplicate.
_IDENTITY = ("id", "epoch", "uuid")
# The task is the records' category, the sample their scenario: the columns' sizes.
_CATEGORY_MAX_LENGTH = TEXT_FIELDS["category"] or 0
_SCENARIO_MAX_LENGTH = TEXT_FIELDS["scenario"] or 0
# Samples read from an `.eval` log at once: few enough to hold in memory together.
SAMPLES_AT_ONCE = 100
# Inspect's error texts can be long (a pydantic error per field): the start says enough.
_ERROR_CHARS = 300


class UnreadableLog(Exception):
    """Inspect cannot read the file as an eval log (or it is past the import's limits)."""


@dataclass(frozen=True)
class LogHeader:
    task: str
    model: str
    eval_id: str
    run_id: str
    created: str


@dataclass(frozen=True)
class SampleScore:
    """One scorer's score of one sample, as Inspect gives it: a value of any shape."""

    scorer: str
    value: object
    explanation: str
    # The score as Inspect dumps it (value, answer, explanation, metadata), as JSON text.
    raw: str


@dataclass(frozen=True)
class LogSample:
    # The sample's place in the log, counted from 0 in the order Inspect reads them.
    position: int
    record: NormalisedRecord | None
    scores: list[SampleScore]
    # (field, message) when the sample cannot be a record, or Inspect could not read it.
    problems: list[tuple[str, str]]


def log_format(path: Path) -> Literal["eval", "json"]:
    """How Inspect is to read the file: an `.eval` log is a zip archive, a `.json` one is not."""
    with path.open("rb") as stream:
        return "eval" if stream.read(4) == b"PK\x03\x04" else "json"


def read_log(path: Path, *, max_entries: int, max_unpacked_bytes: int) -> Iterator[LogSample]:
    """The samples of the log at `path`, each as a record or with its problems.

    Raises UnreadableLog when the file is no log Inspect reads (or unpacks past the limits).
    """
    # Imported here: Inspect is large, and only an import of its logs needs it.
    from inspect_ai.log import read_eval_log

    # Told to Inspect, which would otherwise go by the file's name.
    format = log_format(path)
    if format == "eval":
        _check_archive(path, max_entries=max_entries, max_unpacked_bytes=max_unpacked_bytes)
    try:
        log = read_eval_log(
            path, header_only=format == "eval", resolve_attachments=True, format=format
        )
    except Exception as error:
        # Inspect's reader meets the file's bytes first; whatever it raises says why the file
        # is not a log it reads, which the user needs to hear rather than a stopped import.
        raise UnreadableLog(_describe(error)) from None
    header = LogHeader(
        task=log.eval.task,
        model=log.eval.model,
        eval_id=log.eval.eval_id,
        run_id=log.eval.run_id,
        created=str(log.eval.created),
    )
    for position, sample in enumerate(_samples(path, log, format)):
        if isinstance(sample, str):
            yield LogSample(position, None, [], [("", sample)])
            continue
        try:
            record = sample_record(header, sample)
        except InvalidRecord as invalid:
            yield LogSample(position, None, [], invalid.problems)
            continue
        yield LogSample(position, record, sample_scores(sample), [])


def _check_archive(path: Path, *, max_entries: int, max_unpacked_bytes: int) -> None:
    """Refuse an `.eval` log that unpacks past the import's limits. Python's zipfile, which
    Inspect reads it with, never unpacks more than a member's header says: the headers bound
    what reading it costs, and a header that lies ends in a CRC error."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError) as error:
        raise UnreadableLog(f"not a readable .eval archive ({error})") from None
    if len(members) > max_entries:
        raise UnreadableLog(f"the log has {len(members):,} entries; at most {max_entries:,}")
    if sum(member.file_size for member in members) > max_unpacked_bytes:
        raise UnreadableLog(f"the log unpacks to more than {max_unpacked_bytes:,} bytes")


def _samples(path: Path, log: EvalLog, format: str) -> Iterator[EvalSample | str]:
    """The log's samples, SAMPLES_AT_ONCE at a time from an `.eval` log; the text of Inspect's
    error in place of a sample it cannot read."""
    from inspect_ai.log import (
        read_eval_log_sample,
        read_eval_log_sample_summaries,
        read_eval_log_samples_by_id,
    )

    if format == "json":
        yield from log.samples or []
        return
    try:
        # The samples the log holds: one that stopped early lacks some of its dataset's.
        summaries = read_eval_log_sample_summaries(path, format="eval")
    except Exception as error:
        # As in read_log: why the file is not readable is the user's to read.
        yield _describe(error)
        return
    keys = [(summary.id, summary.epoch) for summary in summaries]
    options: dict[str, Any] = {
        "resolve_attachments": True,
        "format": "eval",
        "exclude_fields": {"events", "events_data", "store"},
    }
    for start in range(0, len(keys), SAMPLES_AT_ONCE):
        chunk = keys[start : start + SAMPLES_AT_ONCE]
        try:
            # Inspect reads the archive's directory once for them all: read one by one, it
            # read it again for every sample, the whole directory each time.
            samples: list[EvalSample | str] = list(
                read_eval_log_samples_by_id(path, chunk, **options)
            )
        except Exception:
            # One of them cannot be read: each is read alone, to say which.
            samples = []
            for sample_id, epoch in chunk:
                try:
                    samples.append(read_eval_log_sample(path, sample_id, epoch, **options))
                except Exception as error:
                    # As in read_log: why the sample is not readable is the user's to read.
                    samples.append(f"sample {sample_id} (epoch {epoch}): {_describe(error)}")
        yield from samples


def sample_record(header: LogHeader, sample: EvalSample) -> NormalisedRecord:
    """The sample as a record; InvalidRecord when it is too large for the record's columns."""
    kept = sample.model_dump(mode="json", include=_KEPT, exclude_none=True)
    raw = orjson.dumps({"log": vars(header), "sample": kept}).decode()
    sample_id = str(sample.id)
    external_id = f"{header.task}/{sample_id}/epoch-{sample.epoch}/{header.eval_id}"
    problems = [
        (field, f"{what} is longer than {limit} characters")
        for field, what, value, limit in (
            ("eval.task", "the task's name", header.task, _CATEGORY_MAX_LENGTH),
            ("eval.model", "the model's name", header.model, SOURCE_MAX_LENGTH),
            ("id", "the sample's id", sample_id, _SCENARIO_MAX_LENGTH),
            ("id", "the record's id (task/sample/epoch/eval)", external_id, EXTERNAL_ID_MAX_LENGTH),
        )
        if len(value) > limit
    ]
    if "\\u0000" in raw:
        problems.append(("", "contains a NUL character (\\u0000), which cannot be stored"))
    if problems:
        raise InvalidRecord(problems)
    content = {key: value for key, value in kept.items() if key not in _IDENTITY}
    turns, profile = chat_turns(_messages(kept.get("messages") or []))
    return NormalisedRecord(
        external_id=external_id,
        category=header.task,
        scenario=sample_id,
        profile=profile,
        goal="",
        turns=turns,
        attack_type="",
        gold_label="",
        gold_risk_description="",
        content_hash=hashlib.sha256(orjson.dumps(content, option=orjson.OPT_SORT_KEYS)).hexdigest(),
        raw=raw,
        metadata={
            "task": header.task,
            "eval_id": header.eval_id,
            "epoch": sample.epoch,
            "target": kept.get("target"),
            **({"error": kept["error"]} if "error" in kept else {}),
            **({"sample_metadata": kept["metadata"]} if kept.get("metadata") else {}),
        },
        source_format=SourceFormat.INSPECT,
        source_agent=header.model,
        source_case=sample_id,
        source_replicate=f"epoch {sample.epoch}",
    )


def sample_scores(sample: EvalSample) -> list[SampleScore]:
    return [
        SampleScore(
            scorer=name,
            value=score.value,
            explanation=score.explanation or "",
            raw=score.model_dump_json(exclude_none=True, exclude={"history"}),
        )
        for name, score in (sample.scores or {}).items()
    ]


def inspect_turns(raw: str) -> list[Turn]:
    """The turns of a stored sample (read by Inspect when it was imported)."""
    turns, _ = chat_turns(_messages(orjson.loads(raw)["sample"].get("messages") or []))
    return turns


def _messages(messages: list[dict[str, Any]]) -> list[Message]:
    """Inspect's chat messages, as it dumps them, read as chat messages."""
    read = []
    for message in messages:
        text, reasoning = _content(message.get("content"))
        error = message.get("error") or {}
        read.append(
            Message(
                role=message.get("role", ""),
                text=text,
                reasoning=reasoning,
                tool_calls=[
                    ToolCall(call.get("function", ""), call.get("arguments", {}))
                    for call in message.get("tool_calls") or []
                ],
                function=message.get("function"),
                error=f"{error.get('type')}: {error.get('message')}" if error else None,
            )
        )
    return read


def _content(content: object) -> tuple[str | None, str | None]:
    """(the text, the reasoning) of a message's content: text, or a list of parts (those
    neither text nor reasoning show as their type: `[image]`)."""
    if not isinstance(content, list):
        return (content if isinstance(content, str) else None), None
    texts, reasoning = [], []
    for part in content:
        kind = part.get("type")
        if kind == "text":
            texts.append(part.get("text", ""))
        elif kind == "reasoning":
            shown = part.get("summary") if part.get("redacted") else part.get("reasoning")
            reasoning.append(shown or "")
        else:
            texts.append(f"[{kind}]")
    return "\n".join(texts), "\n\n".join(filter(None, reasoning)) or None


def _describe(error: Exception) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= _ERROR_CHARS else text[: _ERROR_CHARS - 1] + "…"
