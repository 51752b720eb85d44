"""A database whose ToolEmu records were named by their content's hash gives each the id of its
trajectory (agent, case, emulator, run) through curation 0022, so that a corrected trajectory
imported afterwards is a change to its record; other records keep their ids."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from curation.models import Record

BEFORE = [("curation", "0020_import_inspect_logs_and_chat_transcripts")]
RUN = "r0-3_2025_07_14__09_30_00"
AGENT = "Qwen3-8B"
EMULATOR = "gpt-4o-mini"


def _populate(apps) -> None:
    """Two trajectories of one agent, a corrected one imported beside the first of them (the
    doubled record the old ids made), and an R-Judge record, as the models were."""
    model = apps.get_model
    project = model("curation", "Project").objects.create(name="Before", slug="before")
    category = model("curation", "Category").objects.create(project=project, name="Terminal")
    scenario = model("curation", "Scenario").objects.create(category=category, name="official_0")

    def record(external_id: str, content_hash: str, case: str = "", **source: object) -> None:
        model("curation", "Record").objects.create(
            project=project,
            external_id=external_id,
            category=category,
            scenario=scenario,
            source_path="file.jsonl",
            source_position=0,
            content_hash=content_hash,
            raw="{}",
            source_case=case,
            **source,
        )

    toolemu = {"source_format": "toolemu", "source_agent": AGENT, "source_emulator": EMULATOR}
    record(
        f"{AGENT}/official_0/{'a' * 12}", "a" * 64, "official_0", source_replicate=RUN, **toolemu
    )
    record(
        f"{AGENT}/official_1/{'b' * 12}", "b" * 64, "official_1", source_replicate=RUN, **toolemu
    )
    record(
        f"{AGENT}/official_0/{'c' * 12}", "c" * 64, "official_0", source_replicate=RUN, **toolemu
    )
    record("rjudge-1", "d" * 64, source_format="rjudge")


@pytest.mark.django_db(transaction=True)
def test_toolemu_records_take_the_id_of_their_trajectory() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    _populate(executor.loader.project_state(BEFORE).apps)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    ids = list(Record.objects.order_by("pk").values_list("external_id", flat=True))
    assert ids == [
        f"{AGENT}/official_0/{EMULATOR}/{RUN}",
        f"{AGENT}/official_1/{EMULATOR}/{RUN}",
        # The later of two records of one trajectory: its labels and verdicts are its own.
        f"{AGENT}/official_0/{'c' * 12}",
        "rjudge-1",
    ]


@pytest.mark.django_db(transaction=True)
def test_going_back_gives_them_their_content_ids_again() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    _populate(executor.loader.project_state(BEFORE).apps)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)

    try:
        Old = executor.loader.project_state(BEFORE).apps.get_model("curation", "Record")
        assert list(Old.objects.order_by("pk").values_list("external_id", flat=True)) == [
            f"{AGENT}/official_0/{'a' * 12}",
            f"{AGENT}/official_1/{'b' * 12}",
            f"{AGENT}/official_0/{'c' * 12}",
            "rjudge-1",
        ]
    finally:
        # The tests after this one expect the database as the migrations leave it.
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
