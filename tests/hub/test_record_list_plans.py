"""The record list's pages read the project's own records, however many records other projects
imported before it hold: PostgreSQL's plan, read with EXPLAIN ANALYZE, counts the rows each
statement reads."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection

from curation.models import Project, Record
from curation.selectors import record_search
from tests.conftest import Cast
from tests.factories import ProjectFactory, RecordFactory

PER_PAGE = 50
# Records of a project imported before the one listed, and of the one listed.
BEFORE, LISTED = 20_000, 2_000


def fill(project: Project, count: int) -> None:
    """`count` records in one import's id range, copies of one made by the factory."""
    model = RecordFactory(project=project)
    fields = {
        field.attname: getattr(model, field.attname)
        for field in Record._meta.concrete_fields
        if field.attname not in ("id", "external_id", "source_position")
    }
    Record.objects.bulk_create(
        (
            Record(**fields, external_id=f"copy-{number}", source_position=number)
            for number in range(count - 1)
        ),
        batch_size=5_000,
    )


def rows_read(statement: str, parameters: tuple[Any, ...]) -> int:
    """The rows of the record table that the statement's plan read: those it kept and those a
    filter removed, over every scan of the table."""
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}", parameters)
        (explained,) = cursor.fetchone()
    # A list of one plan, which psycopg may have decoded already.
    (plan,) = json.loads(explained) if isinstance(explained, str) else explained
    read = 0
    nodes = [plan["Plan"]]
    while nodes:
        node = nodes.pop()
        nodes.extend(node.get("Plans", []))
        if node.get("Relation Name") == Record._meta.db_table:
            read += (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * node.get(
                "Actual Loops", 1
            )
    return read


@pytest.fixture
def listed(cast: Cast) -> Project:
    fill(ProjectFactory(), BEFORE)
    fill(cast.project, LISTED)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Record._meta.db_table}")
    return cast.project


@pytest.mark.parametrize(
    "filters",
    [{}, {"gold_label": "unsafe"}, {"attack_type": "unintended"}, {"category": "Application"}],
    ids=["first page", "gold label", "attack type", "category"],
)
def test_a_page_reads_the_projects_own_records_only(listed: Project, filters: dict) -> None:
    page = record_search(listed, **filters).values_list("id", flat=True)[:PER_PAGE]
    statement, parameters = page.query.sql_with_params()

    assert len(list(page)) == PER_PAGE
    # A page, and a sort of the filter's matches at most; never the other project's records.
    assert rows_read(statement, parameters) <= LISTED
