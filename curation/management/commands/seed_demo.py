"""Demo users, the demo project and its records, for a first look at the studio.

Safe to run again: existing users keep their passwords, the project is created once, and records
already imported are not imported twice. The passwords are kept in VAR_DIR/demo-passwords.json
(readable by the owner only) so that every run can print them.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from curation.models import ImportBatch, ImportFormat, Project, Role
from curation.services.imports import import_path
from curation.services.projects import membership_grant, project_create

DEMO_DATA = Path(__file__).resolve().parents[2] / "demo" / "data"
DEMO_SLUG = "demo"
SUPERUSER = "admin"
NOT_SHOWN = "(not set by seed_demo, not shown)"
# One demo user per project role.
DEMO_MEMBERS: tuple[tuple[str, Role], ...] = (
    ("demo-annotator", Role.ANNOTATOR),
    ("demo-author", Role.AUTHOR),
    ("demo-reviewer", Role.REVIEWER),
    ("demo-manager", Role.MANAGER),
)


class Command(BaseCommand):
    help = "Create the demo users (printing their passwords), the demo project and its records."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url",
            default="http://127.0.0.1:8000/",
            help="The address the studio is served at, for the printed instructions.",
        )

    def handle(self, *args: Any, url: str, **options: Any) -> None:
        passwords_file = Path(settings.VAR_DIR) / "demo-passwords.json"
        passwords = _read_passwords(passwords_file)
        users = {
            name: _user_ensure(name, passwords, superuser=name == SUPERUSER)
            for name in (SUPERUSER, *(name for name, _role in DEMO_MEMBERS))
        }
        _write_passwords(passwords_file, passwords)

        project = _project_ensure(users)
        batch = _records_ensure(project, actor=users["demo-manager"])
        if batch is not None and batch.state != ImportBatch.State.SUCCEEDED:
            raise CommandError(f"The demo data did not import: {batch.errors}")

        self.stdout.write(_credentials_table(users, passwords, url.rstrip("/") + "/"))
        self.stdout.write(f"\nThe passwords are kept in {passwords_file}.")


def _read_passwords(path: Path) -> dict[str, str]:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}


def _write_passwords(path: Path, passwords: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Created with mode 0600 from the start, so that the passwords are never readable by others,
    # not even between writing and a later chmod.
    partial = path.with_suffix(".tmp")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(passwords, out, indent=2, sort_keys=True)
    os.replace(partial, path)


def _user_ensure(name: str, passwords: dict[str, str], *, superuser: bool) -> User:
    """The user called `name`; a new one gets the stored password, or a fresh random one."""
    users = get_user_model()
    user = users.objects.filter(username=name).first()
    if user is not None:
        return user
    password = passwords.setdefault(name, secrets.token_urlsafe(12))
    create = users.objects.create_superuser if superuser else users.objects.create_user
    return create(username=name, email=f"{name}@example.org", password=password)


def _project_ensure(users: dict[str, User]) -> Project:
    project = Project.objects.filter(slug=DEMO_SLUG).first()
    if project is None:
        project = project_create(
            actor=users[SUPERUSER],
            name="Demo",
            slug=DEMO_SLUG,
            description=(
                "Invented agent interactions in the R-Judge format, safe and unsafe, over all "
                "five categories, to try the studio with. Some records are prompt injections "
                "and one is full of HTML and scripts: record content is hostile by design."
            ),
            license="Same as the studio's source code.",
        )
    for name, role in DEMO_MEMBERS:
        membership_grant(actor=users[SUPERUSER], project=project, user=users[name], role=role)
    return project


def _records_ensure(project: Project, *, actor: User) -> ImportBatch | None:
    """Import the demo data unless every demo record is already in the project."""
    demo_ids = {
        str(item["id"])
        for path in DEMO_DATA.glob("*/*.json")
        for item in json.loads(path.read_text())
    }
    present = set(
        project.records.filter(external_id__in=demo_ids).values_list("external_id", flat=True)
    )
    if present == demo_ids:
        return None
    return import_path(actor=actor, project=project, path=DEMO_DATA, format=ImportFormat.RJUDGE)


def _credentials_table(users: dict[str, User], passwords: dict[str, str], url: str) -> str:
    roles = {SUPERUSER: "site administrator", **{name: role.label for name, role in DEMO_MEMBERS}}
    rows = [("username", "role", "password")]
    for name, user in users.items():
        shown = passwords.get(name)
        if shown is None or not user.check_password(shown):
            # The user existed before the demo, or changed their password since: it is theirs.
            shown = NOT_SHOWN
        rows.append((name, roles[name], shown))
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    table = [
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines = [
        "",
        f"The studio: {url}",
        f"Log in at {url}login/ as one of these demo users:",
        "",
        *table,
    ]
    return "\n".join(line.rstrip() for line in lines)
