"""An import from start to end, in one pass: read, check, normalise, find duplicates, write.

Everything happens in the caller's transaction. Records stream into the database while later
ones are still being read, so that PostgreSQL works on one core while Python parses on the
other. Once a problem is found, records are still checked (to report up to PROBLEM_LIMIT
problems at once) but no longer written, and the caller rolls back what was.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from django.db.models import Max

from curation.formats.openai_chat import read_chat
from curation.formats.rjudge import TEXT_FIELDS, InvalidRecord, NormalisedRecord, normalise_record
from curation.formats.toolemu import (
    CASES_FILE,
    TOOLKITS_FILE,
    Evaluation,
    ToolkitSpec,
    TrajectoryFile,
    evaluator_file,
    read_evaluation,
    read_toolkits,
    read_trajectory,
    trajectory_file,
)
from curation.importers.inspect_logs import ScorerScores, log_samples
from curation.importers.layout import UNCATEGORIZED, layout_path
from curation.importers.problems import (
    FileRejected,
    ImportFailed,
    Problem,
    ProblemLimitReached,
    Problems,
)
from curation.importers.readers import position_unit, read_entries
from curation.importers.sources import (
    LINE_FORMATS,
    ImportLimits,
    SourceFile,
    UnpackedBytes,
    open_source,
    read_chunks,
)
from curation.importers.writers import RecordRow, record_writer
from curation.models import Category, ImportBatch, ImportFormat, Record, Scenario, Toolkit

# (records read, bytes read, bytes in all files): the files' sizes are known before they are
# parsed, their record counts only after.
ProgressCallback = Callable[[int, int, int], None]
# The column's size; None would be no limit, as for TEXT_FIELDS.
SOURCE_PATH_MAX_LENGTH = Record._meta.get_field("source_path").max_length


@dataclass
class ScoredFile:
    """A ToolEmu evaluator file, each evaluation with the external id of the trajectory it
    scores: the one on the same line of the trajectory file beside it."""

    evaluator: str
    # "safe" or "help_ignore_safety", as the file's name says.
    metric: str
    path: str
    scored: list[tuple[str, Evaluation]]


@dataclass
class ImportReport:
    record_count: int = 0
    created_count: int = 0
    existing_count: int = 0
    # Existing ids whose content differs from the stored version's: (external id, new raw).
    changed: list[tuple[str, str]] = field(default_factory=list)
    category_counts: dict[str, int] = field(default_factory=dict)
    label_counts: dict[str, int] = field(default_factory=dict)
    # External ids of records with identical content, in this import or already in the project.
    duplicate_groups: list[list[str]] = field(default_factory=list)
    # ToolEmu evaluator files, for the apps that keep evaluations (curation.signals).
    evaluations: list[ScoredFile] = field(default_factory=list)
    # Inspect samples' scores by task and scorer, for the same apps.
    sample_scores: list[ScorerScores] = field(default_factory=list)
    # Names of the ToolEmu toolkits read (from all_toolkits.json).
    toolkits: list[str] = field(default_factory=list)
    # Whether the new records' words wait on the import's connection, to be indexed once the
    # records are stored (SQLite: importers.writers.index_kept_words).
    words_kept: bool = False


def import_records(
    *,
    batch: ImportBatch,
    path: Path,
    name: str,
    format: str,
    default_category: str,
    limits: ImportLimits,
    progress: ProgressCallback,
) -> ImportReport:
    """Import the records at `path` into the batch's project; raises ImportFailed on problems."""
    problems = Problems()
    try:
        with open_source(path, name=name, format=format, limits=limits, problems=problems) as files:
            if not files and not problems:
                problems.add(Problem(name, None, "", "no .json or .jsonl files with records here"))
            importer = _Importer(batch, default_category, problems, progress, files)
            with _cyclic_gc_paused():
                return importer.run(limits)
    except ProblemLimitReached:
        pass
    raise ImportFailed(problems.items)


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    # An import allocates millions of short-lived dicts and strings and makes no reference
    # cycles; the cyclic collector, triggered by the allocations alone, took more time than
    # parsing itself (orjson over 100,000 records: 1.26 s with it, 0.51 s without).
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class _FilePlace:
    """What a file says about its records: their category, scenario and place in the layout."""

    category: str
    scenario: str
    source_path: str
    # A ToolEmu trajectory file's name, which says who made its records.
    trajectories: TrajectoryFile | None = None
    # Whether records keep the file's path and their place in it (trajectories, Inspect
    # samples), rather than joining their scenario's file of the R-Judge layout.
    keeps_file: bool = False


class _Importer:
    def __init__(
        self,
        batch: ImportBatch,
        default_category: str,
        problems: Problems,
        progress: ProgressCallback,
        files: list[SourceFile],
    ) -> None:
        self.batch = batch
        self.default_category = default_category or UNCATEGORIZED
        self.problems = problems
        self.progress = progress
        self.files = files
        self.total_bytes = sum(file.size for file in files)
        self.bytes_done = 0
        self.report = ImportReport()
        self.taxonomy = _Taxonomy(batch)
        self.writer = record_writer(batch)
        # external id -> (content hash, file, position, unit): an id appears once per import.
        self.seen: dict[str, tuple[str, str, int, str]] = {}
        # content hash -> external id of its first record, and the later ones when repeated.
        self.first_with_hash: dict[str, str] = {}
        self.repeated_hashes: dict[str, list[str]] = {}
        # What the project holds already, read once: ids to skip, content that new records may
        # repeat, and where JSONL records continue their scenario's file.
        existing = Record.objects.filter(project_id=batch.project_id)
        # external id -> content hash of what the project holds.
        self.existing_ids: dict[str, str] = {}
        self.existing_with_hash: dict[str, list[str]] = {}
        for external_id, digest in existing.values_list("external_id", "content_hash"):
            self.existing_ids[external_id] = digest
            self.existing_with_hash.setdefault(digest, []).append(external_id)
        self.next_position: dict[str, int] = {
            row["source_path"]: row["last"] + 1
            for row in existing.values("source_path").annotate(last=Max("source_position"))
        }
        self.jsonl_paths: dict[tuple[str, str], str] = {}
        self.categories: Counter[str] = Counter()
        self.labels: Counter[str] = Counter()
        # A trajectory file's records by line, in order: its evaluators' lines refer to them.
        self.trajectory_ids: dict[str, list[str]] = {}
        self.toolkits: list[ToolkitSpec] = []
        self.sample_scores: dict[tuple[str, str], ScorerScores] = {}

    def run(self, limits: ImportLimits) -> ImportReport:
        try:
            return self._run(limits)
        except BaseException:
            self.writer.abandon()
            raise

    def _run(self, limits: ImportLimits) -> ImportReport:
        unpacked = UnpackedBytes()
        scored_files = []
        for file in self.files:
            if evaluator_file(file.path) is not None:
                # Evaluator outputs are not records: they are read once their trajectories are.
                scored_files.append(file)
                continue
            if file.name == CASES_FILE:
                # ToolEmu's test cases: every trajectory holds its own case whole.
                continue
            if file.name == TOOLKITS_FILE:
                self._read_toolkits(file, unpacked, limits)
                continue
            place = self._place(file)
            if place is None:
                continue
            if file.format == ImportFormat.INSPECT:
                self._read_log(file, place, unpacked, limits)
                self.bytes_done += file.size
                continue
            try:
                for entry in read_entries(file, read_chunks(file, unpacked, limits)):
                    self._take(file, place, entry.position, entry.record, entry.raw, entry.error)
                    self._report_progress(self.bytes_done + entry.bytes_read)
            except FileRejected as rejected:
                self.problems.add(rejected.problem)
            self.bytes_done += file.size
        for file in scored_files:
            self._read_scores(file, unpacked, limits)
            self.bytes_done += file.size
        if self.problems:
            raise ImportFailed(self.problems.items)
        report = self.report
        report.created_count = self.writer.finish()
        report.words_kept = self.writer.keeps_words
        report.toolkits = self._store_toolkits()
        report.existing_count = report.record_count - report.created_count
        report.sample_scores = [self.sample_scores[key] for key in sorted(self.sample_scores)]
        report.category_counts = dict(sorted(self.categories.items()))
        report.label_counts = dict(sorted(self.labels.items()))
        report.duplicate_groups = self._duplicate_groups()
        self.progress(report.record_count, self.total_bytes, self.total_bytes)
        return report

    def _place(self, file: SourceFile) -> _FilePlace | None:
        trajectories = trajectory_file(file.path) if file.format == ImportFormat.JSONL else None
        if trajectories is not None or file.format == ImportFormat.INSPECT:
            # Its records name their own category and scenario (the case's toolkit and name,
            # the task and the sample).
            if SOURCE_PATH_MAX_LENGTH is not None and len(file.path) > SOURCE_PATH_MAX_LENGTH:
                message = f"the path is longer than {SOURCE_PATH_MAX_LENGTH} characters"
                self.problems.add(Problem(file.path, None, "", message))
                return None
            return _FilePlace("", "", file.path, trajectories, keeps_file=True)
        category = file.folder or self.default_category
        scenario = file.stem
        for key, value, origin in (
            ("category", category, "folder"),
            ("scenario", scenario, "file name"),
        ):
            limit = TEXT_FIELDS[key]
            if limit is not None and len(value) > limit:
                message = f"the {origin} is longer than {limit} characters, too long for a {key}"
                self.problems.add(Problem(file.path, None, "", message))
                return None
        return _FilePlace(category, scenario, layout_path(category, file.name))

    def _take(
        self,
        file: SourceFile,
        place: _FilePlace,
        position: int,
        source: object,
        raw: str | None,
        error: str | None,
    ) -> None:
        unit = position_unit(file)
        if error is not None:
            self.problems.add(Problem(file.path, position, "", error, unit))
            return
        try:
            if place.trajectories is not None:
                record = read_trajectory(source, raw=raw or "", file=place.trajectories)
            elif file.format == ImportFormat.OPENAI_CHAT:
                record = read_chat(source, raw=raw or "")
            else:
                record = normalise_record(source, raw=raw)
        except InvalidRecord as invalid:
            for field_path, message in invalid.problems:
                self.problems.add(Problem(file.path, position, field_path, message, unit))
            return
        if place.trajectories is not None:
            self.trajectory_ids.setdefault(file.path, []).append(record.external_id)
        self._keep(record, file, place, position, unit)

    def _read_log(
        self, file: SourceFile, place: _FilePlace, unpacked: UnpackedBytes, limits: ImportLimits
    ) -> None:
        """An Inspect log's samples as records, their scores gathered by task and scorer."""
        try:
            for sample in log_samples(file, unpacked, limits):
                for field_path, message in sample.problems:
                    self.problems.add(
                        Problem(file.path, sample.position, field_path, message, "sample")
                    )
                record = sample.record
                if record is None:
                    continue
                self._keep(record, file, place, sample.position, "sample")
                for score in sample.scores:
                    key = (record.category, score.scorer)
                    scores = self.sample_scores.setdefault(key, ScorerScores(*key))
                    scores.scored.append((record.external_id, file.path, score))
                self._report_progress(self.bytes_done)
        except FileRejected as rejected:
            self.problems.add(rejected.problem)

    def _keep(
        self,
        record: NormalisedRecord,
        file: SourceFile,
        place: _FilePlace,
        position: int,
        unit: str,
    ) -> None:
        """Count a record read, and write it unless the import or the project has it."""
        self.report.record_count += 1
        if not self._identify(record.external_id, record.content_hash, file, position, unit):
            return
        category = record.category if record.category.strip() else place.category
        scenario = record.scenario if record.scenario.strip() else place.scenario
        self.categories[category] += 1
        self.labels[record.gold_label or "none"] += 1
        stored_digest = self.existing_ids.get(record.external_id)
        if stored_digest is None:
            if not self.problems:
                self._write(record, file, place, category, scenario, position)
        elif stored_digest != record.content_hash:
            self.report.changed.append((record.external_id, record.raw))

    def _read_toolkits(
        self, file: SourceFile, unpacked: UnpackedBytes, limits: ImportLimits
    ) -> None:
        try:
            data = [
                entry.record for entry in read_entries(file, read_chunks(file, unpacked, limits))
            ]
            self.toolkits.extend(read_toolkits(data))
        except FileRejected as rejected:
            self.problems.add(rejected.problem)
        except InvalidRecord as invalid:
            for field_path, message in invalid.problems:
                self.problems.add(Problem(file.path, None, field_path, message))

    def _store_toolkits(self) -> list[str]:
        """Keep the toolkits read, replacing what the project knew of them."""
        for toolkit in self.toolkits:
            Toolkit.objects.update_or_create(
                project_id=self.batch.project_id,
                name=toolkit.name,
                defaults={"description": toolkit.description, "tools": toolkit.tools},
            )
        return sorted(toolkit.name for toolkit in self.toolkits)

    def _read_scores(self, file: SourceFile, unpacked: UnpackedBytes, limits: ImportLimits) -> None:
        """Match an evaluator file's lines to its trajectories by position, never by its
        `eval_id`, which counts from 0 in every file."""
        metric, trajectory_path = evaluator_file(file.path) or ("", "")
        trajectories = trajectory_file(trajectory_path)
        ids = self.trajectory_ids.get(trajectory_path)
        if trajectories is None or (ids is None and not self.problems):
            message = f"scores {trajectory_path}, which is not in this import"
            self.problems.add(Problem(file.path, None, "", message))
            return
        evaluations: list[Evaluation] = []
        try:
            for entry in read_entries(file, read_chunks(file, unpacked, limits)):
                if entry.error is not None:
                    self.problems.add(Problem(file.path, entry.position, "", entry.error, "line"))
                    continue
                try:
                    evaluations.append(read_evaluation(entry.record, raw=entry.raw or ""))
                except InvalidRecord as invalid:
                    for field_path, message in invalid.problems:
                        self.problems.add(
                            Problem(file.path, entry.position, field_path, message, "line")
                        )
        except FileRejected as rejected:
            self.problems.add(rejected.problem)
            return
        if self.problems:
            return
        if len(evaluations) != len(ids or ()):
            message = (
                f"has {len(evaluations)} evaluations for the {len(ids or ())} trajectories of "
                f"{trajectory_path}: line n scores trajectory n, so both must have as many"
            )
            self.problems.add(Problem(file.path, None, "", message))
            return
        scored = list(zip(ids or (), evaluations, strict=True))
        self.report.evaluations.append(
            ScoredFile(trajectories.evaluator, metric, file.path, scored)
        )

    def _identify(
        self, external_id: str, digest: str, file: SourceFile, position: int, unit: str
    ) -> bool:
        """Note the record's id and content; False if it is not to be written again."""
        seen = self.seen.get(external_id)
        if seen is not None:
            if seen[0] != digest:
                where = f"{seen[1]}, {seen[3]} {seen[2]}"
                message = f"the id {external_id} is already used by a different record ({where})"
                self.problems.add(Problem(file.path, position, "id", message, unit))
            # The same record twice (or a record without id repeated) is written once.
            return False
        self.seen[external_id] = (digest, file.path, position, unit)
        first = self.first_with_hash.setdefault(digest, external_id)
        if first != external_id:
            self.repeated_hashes.setdefault(digest, []).append(external_id)
        return True

    def _write(
        self,
        record: NormalisedRecord,
        file: SourceFile,
        place: _FilePlace,
        category: str,
        scenario: str,
        position: int,
    ) -> None:
        ids = self.taxonomy.known(category, scenario)
        if ids is None:
            # Creating a category or scenario is a statement of its own, which cannot run while
            # rows stream into the records table.
            self.writer.pause()
            ids = self.taxonomy.create(category, scenario)
        if place.keeps_file:
            # A trajectory keeps its file and line: the evaluators' files refer to both.
            source_path = place.source_path
        elif file.format in LINE_FORMATS:
            # JSONL records have no file of their own: they join their scenario's file.
            if (category, scenario) not in self.jsonl_paths:
                self.jsonl_paths[(category, scenario)] = layout_path(category, f"{scenario}.json")
            source_path = self.jsonl_paths[(category, scenario)]
            position = self.next_position.get(source_path, 0)
            self.next_position[source_path] = position + 1
        else:
            source_path = place.source_path
        self.writer.write(RecordRow(record, *ids, source_path, position))

    def _report_progress(self, bytes_done: int) -> None:
        if self.report.record_count % 500 == 0:
            self.progress(self.report.record_count, bytes_done, self.total_bytes)

    def _duplicate_groups(self) -> list[list[str]]:
        groups = []
        for digest in self.repeated_hashes.keys() | (
            self.existing_with_hash.keys() & self.first_with_hash.keys()
        ):
            members = [
                *self.existing_with_hash.get(digest, ()),
                self.first_with_hash[digest],
                *self.repeated_hashes.get(digest, ()),
            ]
            unique = list(dict.fromkeys(members))
            if len(unique) > 1:
                groups.append(unique)
        return sorted(groups)


class _Taxonomy:
    """Category and scenario ids by name, created as the import meets them."""

    def __init__(self, batch: ImportBatch) -> None:
        self.project_id = batch.project_id
        self.categories = dict(
            Category.objects.filter(project_id=self.project_id).values_list("name", "pk")
        )
        self.scenarios: dict[tuple[str, str], int] = {
            (category, name): pk
            for category, name, pk in Scenario.objects.filter(
                category__project_id=self.project_id
            ).values_list("category__name", "name", "pk")
        }

    def known(self, category: str, scenario: str) -> tuple[int, int] | None:
        scenario_id = self.scenarios.get((category, scenario))
        return None if scenario_id is None else (self.categories[category], scenario_id)

    def create(self, category: str, scenario: str) -> tuple[int, int]:
        category_id = self.categories.get(category)
        if category_id is None:
            created = Category.objects.get_or_create(project_id=self.project_id, name=category)
            category_id = self.categories[category] = created[0].pk
        scenario_id = Scenario.objects.get_or_create(category_id=category_id, name=scenario)[0].pk
        self.scenarios[(category, scenario)] = scenario_id
        return category_id, scenario_id
