"""Records indexed by the old search (trigrams of their text) are found by the new one right
after migrating, and going back leaves them waiting to be indexed again."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from curation.models import ImportBatch, Project, RecordSearchText
from curation.selectors import record_search

BEFORE = [("curation", "0010_project_consensus_rule")]
TEXT = "r-1\nYou are a file assistant.\nPlease remove the old files.\nDeleted 3 files in shared/."


def populate_before(apps) -> None:
    """A record indexed by the old search, written through the models as they were then."""
    model = apps.get_model
    project = model("curation", "Project").objects.create(name="Before", slug="before")
    category = model("curation", "Category").objects.create(project=project, name="Program")
    scenario = model("curation", "Scenario").objects.create(category=category, name="files")
    batch = model("curation", "ImportBatch").objects.create(
        project=project, source_name="old.json", state="succeeded", created_count=1
    )
    record = model("curation", "Record").objects.create(
        project=project,
        batch=batch,
        external_id="r-1",
        category=category,
        scenario=scenario,
        source_path="Program/files.json",
        source_position=0,
        content_hash="0" * 64,
        raw='{"id": "r-1", "profile": "", "contents": []}',
    )
    model("curation", "RecordSearchText").objects.create(
        record=record, project=project, text=TEXT.lower(), word_pairs="(not read)"
    )
    batch.searchable_at = batch.created_at
    batch.save()


def _migrate(targets: list[tuple[str, str]] | None = None) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets or executor.loader.graph.leaf_nodes())
    return executor


@pytest.mark.django_db(transaction=True)
def test_records_indexed_before_are_found_after_migrating_and_going_back_forgets_them() -> None:
    executor = _migrate(BEFORE)
    populate_before(executor.loader.project_state(BEFORE).apps)

    _migrate()

    project = Project.objects.get(slug="before")
    assert [r.external_id for r in record_search(project, text='"deleting 3 file"')] == ["r-1"]
    assert [r.external_id for r in record_search(project, text="shared -removing")] == []

    _migrate(BEFORE)
    _migrate()

    assert not RecordSearchText.objects.exists()
    assert ImportBatch.objects.get().searchable_at is None
    assert list(record_search(project, text="files")) == []
