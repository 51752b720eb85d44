"""manage.py export_tasks <project-slug> <out.json|out.zip>"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from authoring.exporters.safepro import safepro_json, safepro_zip
from curation.models import Project


class Command(BaseCommand):
    help = (
        "Write a project's approved tasks as a SafePro file (.json), or as a zip holding it and "
        "the tasks' reference files (.zip)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument("out", type=Path, help="The file to write: .json or .zip.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = Project.objects.get(slug=options["project"])
        except Project.DoesNotExist:
            raise CommandError(f"There is no project “{options['project']}”.") from None
        out: Path = options["out"]
        suffix = out.suffix.lower()
        if suffix == ".json":
            out.write_bytes(safepro_json(project))
        elif suffix == ".zip":
            with out.open("wb") as stream:
                safepro_zip(project, stream)
        else:
            raise CommandError("Write a .json or a .zip file.")
        approved = project.tasks.filter(state="approved").count()
        self.stdout.write(f"Wrote {approved} approved tasks to {out}.")
