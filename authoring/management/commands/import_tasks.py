"""manage.py import_tasks <project-slug> <file.json|.zip> --author NAME [--state draft|approved]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from authoring.importers.safepro_source import SafeProSource
from authoring.models import Task
from authoring.services.imports import IMPORT_STATES, safepro_import
from curation.errors import DomainError
from curation.models import Project


class Command(BaseCommand):
    help = (
        "Import SafePro tasks into a project: a .json file (its reference files are read from "
        "its folder) or a .zip holding it and them. Nothing is written if the file has problems."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument("path", type=Path, help="A SafePro .json file, or a .zip.")
        parser.add_argument(
            "--author",
            required=True,
            help="The username the tasks are imported by (a manager of the project).",
        )
        parser.add_argument(
            "--state",
            choices=[state.value for state in IMPORT_STATES],
            default=Task.State.DRAFT,
            help="draft: tasks to take through review (default); approved: a reviewed benchmark.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = Project.objects.get(slug=options["project"])
            author = get_user_model().objects.get(username=options["author"])
        except Project.DoesNotExist:
            raise CommandError(f"There is no project “{options['project']}”.") from None
        except get_user_model().DoesNotExist:
            raise CommandError(f"There is no user “{options['author']}”.") from None
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path} is not a file.")
        try:
            report = safepro_import(
                actor=author,
                project=project,
                source=SafeProSource.from_path(path),
                state=options["state"],
            )
        except DomainError as error:
            raise CommandError(error.message) from None
        if report.problems:
            for problem in report.problems:
                self.stderr.write(str(problem))
            raise CommandError(
                f"The import failed ({len(report.problems)} problem(s)); nothing was written."
            )
        self.stdout.write(
            f"Imported {len(report.created)} tasks as {options['state']}; "
            f"{len(report.existing)} already in the project."
        )
