"""manage.py export_rjudge <project-slug> <out-dir>"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from curation.exporters.rjudge import rjudge_export_folder
from curation.models import Project


class Command(BaseCommand):
    help = "Write a project's records in the R-Judge layout: <out-dir>/<Category>/<file>.json."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="The project's slug.")
        parser.add_argument("out_dir", type=Path, help="The folder to write into.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = Project.objects.get(slug=options["project"])
        except Project.DoesNotExist:
            raise CommandError(f"There is no project “{options['project']}”.") from None
        out_dir: Path = options["out_dir"]
        if out_dir.exists() and not out_dir.is_dir():
            raise CommandError(f"{out_dir} exists and is not a folder.")
        written = rjudge_export_folder(project, out_dir)
        self.stdout.write(f"Wrote {len(written)} files to {out_dir}.")
