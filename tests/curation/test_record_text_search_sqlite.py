"""The embedded default's search, for real: SQLite's FTS5 in a process of its own, which migrates
a fresh database, imports records, indexes them as the worker does and searches them; and the
same searches on PostgreSQL, which must find the same records.

The rest of the suite runs on PostgreSQL; this is the one place the FTS5 table, its query and
the trigger that deletes a record's words with it are exercised.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from curation.selectors import record_search
from tests.conftest import Cast
from tests.factories import RecordFactory, rjudge_record

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]

MESSAGES = {
    1: "Leave the door open for the cat.",
    2: "Open door policy at Binance.",
    3: "Binance wants the Evernote export.",
    4: "The agent deleted shell-co.pdf.",
}
QUERIES = [
    "Binance Evernote",
    "evernote binance",
    "door open",
    '"door open"',
    "door -cat",
    'door -"open door"',
    "deleting",
    "shell-co",
    '"door open',
    "door NEAR cat",
    "door AND open OR zebra",
    "NEAR(door cat)",
    "door*",
    "^door",
    "door:open",
    "'; DROP TABLE curation_record; --",
    "4",
]
# Found, on SQLite as on PostgreSQL.
EXPECTED = {
    "Binance Evernote": ["3"],
    "evernote binance": ["3"],
    "door open": ["1", "2"],
    '"door open"': ["1"],
    "door -cat": ["2"],
    'door -"open door"': ["1"],
    "deleting": ["4"],
    "shell-co": ["4"],
    '"door open': ["1"],
    "door NEAR cat": [],
    "door AND open OR zebra": [],
    "NEAR(door cat)": [],
    "door*": ["1", "2"],
    "^door": ["1", "2"],
    "door:open": ["1"],
    "'; DROP TABLE curation_record; --": [],
    "4": ["4"],
}

SCRIPT = """
import json, sys
import django

django.setup()
from django.core.management import call_command
from django.db import connection

call_command("migrate", verbosity=0)
from curation.selectors import record_search
from curation.services.imports import import_path
from curation.services.projects import project_create
from curation.services.search import search_index_update

source, queries = sys.argv[1], json.loads(sys.argv[2])
project = project_create(actor=None, name="Embedded", slug="embedded")
other = project_create(actor=None, name="Other", slug="other")
for each in (project, other):
    assert import_path(actor=None, project=each, path=source).state == "succeeded"
    search_index_update(project_id=each.pk)
found = {
    query: [record.external_id for record in record_search(project, text=query)]
    for query in queries
}
from curation.search_text import search_terms_of
from curation.selectors import fts5_statement

with connection.cursor() as cursor:
    # With statistics, which once turned the plan around.
    cursor.execute("ANALYZE")
    statement, parameters = fts5_statement(project, search_terms_of("door open"))
    cursor.execute("EXPLAIN QUERY PLAN " + statement, parameters)
    plan = [row[-1] for row in cursor.fetchall()]
other.records.all().delete()
with connection.cursor() as cursor:
    cursor.execute("SELECT count(*) FROM curation_recordsearch_fts")
    (indexed,) = cursor.fetchone()
print(json.dumps({"vendor": connection.vendor, "found": found, "indexed": indexed, "plan": plan}))
"""

# An import alone, with no indexing job after it (the worker may not have run yet).
IMPORT_ONLY_SCRIPT = """
import json, sys
import django

django.setup()
from django.core.management import call_command

call_command("migrate", verbosity=0)
from curation.selectors import record_search, records_not_yet_searchable
from curation.services.imports import import_path
from curation.services.projects import project_create

project = project_create(actor=None, name="Embedded", slug="embedded")
batch = import_path(actor=None, project=project, path=sys.argv[1])
print(json.dumps({
    "state": batch.state,
    "pending": records_not_yet_searchable(project),
    "found": [record.external_id for record in record_search(project, text="Evernote")],
}))
"""

MIGRATED_SCRIPT = """
import django

django.setup()
from django.core.management import call_command

call_command("migrate", verbosity=0)
print("migrated")
"""

MIGRATE_SCRIPT = """
import json
import django

django.setup()
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.curation.test_migrate_search_index import BEFORE, populate_before

executor = MigrationExecutor(connection)
executor.migrate(BEFORE)
populate_before(executor.loader.project_state(BEFORE).apps)
executor = MigrationExecutor(connection)
executor.migrate(executor.loader.graph.leaf_nodes())
from curation.models import Project
from curation.selectors import record_search

project = Project.objects.get(slug="before")
queries = ['"deleting 3 file"', "shared -removing", "zebra"]
print(json.dumps({q: [r.external_id for r in record_search(project, text=q)] for q in queries}))
"""


def run_on_sqlite(tmp_path: Path, *args: str, database: Path | None = None) -> str:
    """What a Python process on an SQLite database printed last: a fresh one, or a copy of
    `database`."""
    if database is not None:
        shutil.copyfile(database, tmp_path / "studio.sqlite3")
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'studio.sqlite3'}",
        "VAR_DIR": str(tmp_path / "var"),
        "DEBUG": "true",
    }
    result = subprocess.run(  # noqa: S603 (the arguments are the test's own)
        [sys.executable, "-c", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1]


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SQLite database migrated to the latest schema, once for the module: migrating one
    from nothing takes most of a test's time. The scripts still run `migrate`, which finds
    nothing to do."""
    folder = tmp_path_factory.mktemp("migrated")
    run_on_sqlite(folder, MIGRATED_SCRIPT)
    return folder / "studio.sqlite3"


def sources() -> list[dict[str, object]]:
    return [
        rjudge_record(n, user=message, thought="Thinking.", action="Act: {}", environment="Done.")
        for n, message in MESSAGES.items()
    ]


def test_postgresql_finds_the_same(cast: Cast) -> None:
    for source in sources():
        RecordFactory(project=cast.project, source=source)

    found = {
        query: [record.external_id for record in record_search(cast.project, text=query)]
        for query in QUERIES
    }

    assert found == EXPECTED


def test_the_embedded_default_searches_with_fts5(tmp_path: Path, migrated: Path) -> None:
    source = tmp_path / "data" / "Application" / "mail.json"
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(sources()))

    printed = run_on_sqlite(tmp_path, SCRIPT, str(source), json.dumps(QUERIES), database=migrated)

    report = json.loads(printed)
    assert report["vendor"] == "sqlite"
    assert report["found"] == EXPECTED
    # The other project's records, deleted, took their words with them.
    assert report["indexed"] == len(MESSAGES)


def test_the_embedded_default_searches_the_text_index_before_the_projects_records(
    tmp_path: Path, migrated: Path
) -> None:
    """The match runs once over the FTS5 index, and each match's project is looked up by its
    record: never the other way, a walk over the project's records that evaluates the match
    for each, which took seconds in a database of large projects."""
    source = tmp_path / "data" / "Application" / "mail.json"
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(sources()))

    printed = run_on_sqlite(tmp_path, SCRIPT, str(source), json.dumps(QUERIES), database=migrated)

    plan = json.loads(printed)["plan"]
    assert plan[0].startswith("SCAN fts VIRTUAL TABLE"), plan
    assert [step for step in plan if step.startswith("SEARCH search")] == [
        "SEARCH search USING INDEX sqlite_autoindex_curation_recordsearchtext_1 (record_id=?)"
    ], plan
    assert not [step for step in plan if "search_text_by_project" in step], plan


def test_records_imported_into_the_embedded_default_are_found_without_an_indexing_job(
    tmp_path: Path, migrated: Path
) -> None:
    source = tmp_path / "data" / "Application" / "mail.json"
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(sources()))

    report = json.loads(run_on_sqlite(tmp_path, IMPORT_ONLY_SCRIPT, str(source), database=migrated))

    assert report == {"state": "succeeded", "pending": 0, "found": ["3"]}


def test_records_indexed_by_the_old_search_are_found_after_migrating_on_sqlite(
    tmp_path: Path,
) -> None:
    found = json.loads(run_on_sqlite(tmp_path, MIGRATE_SCRIPT))

    assert found == {'"deleting 3 file"': ["r-1"], "shared -removing": [], "zebra": []}
