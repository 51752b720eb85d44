"""manage.py import_agent_runs <project-slug> <runs.jsonl>"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from authoring.services.imports import agent_runs_import
from curation.models import Project


class Command(BaseCommand):
    help = (
        "Import agent runs on a project's tasks (JSONL: instance_id, instruction, history, "
        "test_result) as records linked to their tasks. Nothing is written if the file has "
        "problems; runs imported before are skipped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument("path", type=Path, help="A .jsonl file, one run a line.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = Project.objects.get(slug=options["project"])
        except Project.DoesNotExist:
            raise CommandError(f"There is no project “{options['project']}”.") from None
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path} is not a file.")
        with path.open("rb") as lines:
            report = agent_runs_import(
                actor=None, project=project, name=path.name, lines=lines, index_now=True
            )
        if report.problems:
            for problem in report.problems:
                where = f"{problem.file}, line {problem.index}"
                self.stderr.write(f"{where}, {problem.field}: {problem.message}")
            raise CommandError(
                f"The import failed ({len(report.problems)} problem(s)); nothing was written."
            )
        self.stdout.write(
            f"Imported {report.created} runs as records; {report.existing} already in the project."
        )
