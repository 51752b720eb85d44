"""manage.py import_records <project-slug> <path> [--format FORMAT] [--category NAME]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from curation.models import ImportBatch, ImportFormat, Project
from curation.services.imports import import_path


class Command(BaseCommand):
    help = (
        "Import records from an R-Judge file, folder (data/<Category>/<scenario>.json) or zip, "
        "or from JSONL, into a project, and print the report. Nothing is written if the input "
        "has problems."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument(
            "path", type=Path, help="A .json, .jsonl, .eval or .zip file, or a folder."
        )
        parser.add_argument(
            "--format",
            choices=ImportFormat.values,
            default=ImportFormat.AUTO,
            help="How to read the input (default: from the file names).",
        )
        parser.add_argument(
            "--category",
            default="",
            help="The category of records that name none and sit in no category folder.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = Project.objects.get(slug=options["project"])
        except Project.DoesNotExist:
            raise CommandError(f"There is no project “{options['project']}”.") from None
        batch = import_path(
            actor=None,
            project=project,
            path=options["path"],
            format=options["format"],
            default_category=options["category"],
            # The command indexes the records itself, so that they are searchable when it ends
            # and no worker indexes them again meanwhile.
            index_now=True,
        )
        if batch.state != ImportBatch.State.SUCCEEDED:
            self._print_errors(batch)
            raise CommandError(
                f"The import failed ({len(batch.errors)} problem(s)); nothing was written."
            )
        self._print_report(batch)
        if batch.searchable_at is not None:
            self.stdout.write(f"Indexed {batch.created_count} records for the text search.")
        elif batch.created_count:
            self.stdout.write(
                "The records could not be indexed for the text search here; a worker will."
            )

    def _print_report(self, batch: ImportBatch) -> None:
        out = self.stdout
        out.write(
            f"Imported {batch.record_count} records: {batch.created_count} new, "
            f"{batch.existing_count} already in the project."
        )
        if batch.changed_count:
            out.write(
                f"{batch.changed_count} of those have other content than the stored version: "
                "the stored one stays until a manager decides on the import's page."
            )
        verdict_changes = batch.changes.exclude(verdict_of="").count()
        if verdict_changes:
            out.write(
                f"{verdict_changes} evaluations differ from the verdicts their runs hold: the "
                "stored verdicts stay until a manager decides on the import's page."
            )
        summaries = [("Categories", batch.category_counts), ("Labels", batch.label_counts)]
        if batch.evaluation_counts:
            summaries.append(("Evaluations", batch.evaluation_counts))
        for title, counts in summaries:
            out.write(f"{title}: " + ", ".join(f"{name} {n}" for name, n in counts.items()))
        if batch.duplicate_groups:
            out.write(f"Exact duplicates ({len(batch.duplicate_groups)} groups of equal content):")
            for group in batch.duplicate_groups:
                out.write("  ids " + ", ".join(group))
        else:
            out.write("No exact duplicates.")

    def _print_errors(self, batch: ImportBatch) -> None:
        for error in batch.errors:
            where = error["file"]
            if error["index"] is not None:
                where += f", {error.get('unit', 'record')} {error['index']}"
            if error["field"]:
                where += f", {error['field']}"
            self.stderr.write(f"{where}: {error['message']}")
