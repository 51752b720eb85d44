"""An import from start to end: read, check, normalise, find duplicates, write.

Everything happens in the caller's transaction. Once a problem is found, records are still
checked (to report up to PROBLEM_LIMIT problems at once) but no longer written, and the caller
rolls back what was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db.models import Max

from curation.importers.layout import UNCATEGORIZED, layout_path
from curation.importers.problems import (
    FileRejected,
    ImportFailed,
    Problem,
    ProblemLimitReached,
    Problems,
)
from curation.importers.readers import count_records, position_unit, read_entries
from curation.importers.records import (
    TEXT_FIELDS,
    InvalidRecord,
    NormalisedRecord,
    normalise_record,
)
from curation.importers.sources import (
    ImportLimits,
    SourceFile,
    UnpackedBytes,
    open_source,
    read_chunks,
)
from curation.importers.writers import RecordRow, record_writer
from curation.models import Category, ImportBatch, ImportFormat, Record, Scenario

# Rows held in memory between writes: enough for COPY to pay off, little enough to stay flat.
WRITE_ROWS = 2000
# (records processed, records in total or None while unknown)
ProgressCallback = Callable[[int, int | None], None]


@dataclass
class ImportReport:
    record_count: int = 0
    created_count: int = 0
    existing_count: int = 0
    category_counts: dict[str, int] = field(default_factory=dict)
    label_counts: dict[str, int] = field(default_factory=dict)
    # External ids of records with identical content, in this import or already in the project.
    duplicate_groups: list[list[str]] = field(default_factory=list)


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
            total = _count(files, limits, problems)
            if not problems:
                progress(0, total)
                return _Importer(batch, default_category, problems, progress, total).run(
                    files, limits
                )
    except ProblemLimitReached:
        pass
    raise ImportFailed(problems.items)


def _count(files: list[SourceFile], limits: ImportLimits, problems: Problems) -> int:
    """Records in all files; reading everything once also rejects oversized files early."""
    total = 0
    unpacked = UnpackedBytes()
    for file in files:
        try:
            total += count_records(file, read_chunks(file, unpacked, limits))
        except FileRejected as rejected:
            problems.add(rejected.problem)
    return total


@dataclass(frozen=True)
class _FilePlace:
    """What a file says about its records: their category, scenario and place in the layout."""

    category: str
    scenario: str
    source_path: str


class _Importer:
    def __init__(
        self,
        batch: ImportBatch,
        default_category: str,
        problems: Problems,
        progress: ProgressCallback,
        total: int,
    ) -> None:
        self.batch = batch
        self.default_category = default_category or UNCATEGORIZED
        self.problems = problems
        self.progress = progress
        self.total = total
        self.report = ImportReport()
        self.taxonomy = _Taxonomy(batch)
        self.writer = record_writer(batch)
        self.rows: list[RecordRow] = []
        # external id -> (content hash, file, position, unit): an id appears once per import.
        self.seen: dict[str, tuple[str, str, int, str]] = {}
        # content hash -> external id of its first record, and the later ones when repeated.
        self.first_with_hash: dict[str, str] = {}
        self.repeated_hashes: dict[str, list[str]] = {}
        # Existing records can only duplicate new ones in a project that has records already.
        self.project_had_records = Record.objects.filter(project_id=batch.project_id).exists()
        self.existing_with_hash: dict[str, list[str]] = {}
        self.next_position: dict[str, int] = {}
        self.categories: Counter[str] = Counter()
        self.labels: Counter[str] = Counter()

    def run(self, files: list[SourceFile], limits: ImportLimits) -> ImportReport:
        unpacked = UnpackedBytes()
        for file in files:
            place = self._place(file)
            if place is None:
                continue
            try:
                for entry in read_entries(file, read_chunks(file, unpacked, limits)):
                    self._take(file, place, entry.position, entry.record, entry.raw, entry.error)
            except FileRejected as rejected:
                self.problems.add(rejected.problem)
        if self.problems:
            raise ImportFailed(self.problems.items)
        self._write()
        report = self.report
        report.created_count = self.writer.finish()
        report.existing_count = report.record_count - report.created_count
        report.category_counts = dict(sorted(self.categories.items()))
        report.label_counts = dict(sorted(self.labels.items()))
        report.duplicate_groups = self._duplicate_groups()
        self.progress(report.record_count, report.record_count)
        return report

    def _place(self, file: SourceFile) -> _FilePlace | None:
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
            record = normalise_record(source, raw=raw)
        except InvalidRecord as invalid:
            for field_path, message in invalid.problems:
                self.problems.add(Problem(file.path, position, field_path, message, unit))
            return
        self.report.record_count += 1
        if not self._identify(record.external_id, record.content_hash, file, position, unit):
            return
        category = record.category if record.category.strip() else place.category
        scenario = record.scenario if record.scenario.strip() else place.scenario
        self.categories[category] += 1
        self.labels[record.gold_label or "none"] += 1
        if not self.problems:
            self._queue(record, file, place, category, scenario, position)
        self._report_progress()

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

    def _queue(
        self,
        record: NormalisedRecord,
        file: SourceFile,
        place: _FilePlace,
        category: str,
        scenario: str,
        position: int,
    ) -> None:
        category_id, scenario_id = self.taxonomy.ids(category, scenario)
        if file.format == ImportFormat.JSONL:
            # JSONL records have no file of their own: they join their scenario's file.
            source_path = layout_path(category, f"{scenario}.json")
            position = self._append_position(source_path)
        else:
            source_path = place.source_path
        self.rows.append(RecordRow(record, category_id, scenario_id, source_path, position))
        if len(self.rows) >= WRITE_ROWS:
            self._write()

    def _append_position(self, source_path: str) -> int:
        position = self.next_position.get(source_path)
        if position is None:
            last = Record.objects.filter(
                project_id=self.batch.project_id, source_path=source_path
            ).aggregate(last=Max("source_position"))["last"]
            position = 0 if last is None else last + 1
        self.next_position[source_path] = position + 1
        return position

    def _write(self) -> None:
        if not self.rows:
            return
        if self.project_had_records:
            hashes = {row.record.content_hash for row in self.rows}
            for digest, external_id in Record.objects.filter(
                project_id=self.batch.project_id, content_hash__in=hashes
            ).values_list("content_hash", "external_id"):
                self.existing_with_hash.setdefault(digest, []).append(external_id)
        self.writer.write(self.rows)
        self.rows = []

    def _report_progress(self) -> None:
        if self.report.record_count % 500 == 0:
            self.progress(self.report.record_count, self.total)

    def _duplicate_groups(self) -> list[list[str]]:
        groups = []
        for digest in {**self.existing_with_hash, **self.repeated_hashes}:
            members = [
                *self.existing_with_hash.get(digest, ()),
                self.first_with_hash[digest],
                *self.repeated_hashes.get(digest, ()),
            ]
            unique = list(dict.fromkeys(members))
            if len(unique) > 1:
                groups.append(unique)
        return groups


class _Taxonomy:
    """Category and scenario ids by name, created as the import meets them."""

    def __init__(self, batch: ImportBatch) -> None:
        self.project_id = batch.project_id
        self.categories = dict(
            Category.objects.filter(project_id=self.project_id).values_list("name", "pk")
        )
        self.scenarios: dict[tuple[int, str], int] = {}

    def ids(self, category: str, scenario: str) -> tuple[int, int]:
        category_id = self.categories.get(category)
        if category_id is None:
            category_id = Category.objects.get_or_create(project_id=self.project_id, name=category)[
                0
            ].pk
            self.categories[category] = category_id
        scenario_id = self.scenarios.get((category_id, scenario))
        if scenario_id is None:
            scenario_id = Scenario.objects.get_or_create(category_id=category_id, name=scenario)[
                0
            ].pk
            self.scenarios[(category_id, scenario)] = scenario_id
        return category_id, scenario_id
