"""The record list's text search, indexed after an import commits."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection, transaction

from curation.models import Record, RecordSearchText
from curation.search_text import NOT_WORD, words_of
from curation.selectors import record_search, records_not_yet_searchable
from curation.services import search, table_statistics
from curation.services.imports import import_path
from curation.services.search import search_index_update
from tests.conftest import Cast


def last_words(record: Record) -> str:
    """The last five words of the record's last turn, as a phrase."""
    text = next(
        turn["content"] or turn["action"]
        for turn in reversed(record.turns)
        if turn["content"] or turn["action"]
    )
    return '"' + " ".join(text.replace('"', " ").split()[-5:]) + '"'


def test_records_become_searchable_once_indexed(cast: Cast, rjudge_dir: Path) -> None:
    import_path(actor=cast.manager, project=cast.project, path=rjudge_dir / "Finance")
    record = cast.project.records.order_by("id").last()
    words = last_words(record)

    assert records_not_yet_searchable(cast.project) == 126
    assert not record_search(cast.project, text=words).exists()

    assert search_index_update(project_id=cast.project.pk) == 126

    assert records_not_yet_searchable(cast.project) == 0
    assert record in record_search(cast.project, text=words.upper())


def test_the_search_looks_in_every_turn_and_the_external_id(cast: Cast, rjudge_dir: Path) -> None:
    import_path(actor=cast.manager, project=cast.project, path=rjudge_dir / "IoT")
    search_index_update(project_id=cast.project.pk)

    for record in cast.project.records.all():
        assert record in record_search(cast.project, text=last_words(record))
        assert record in record_search(cast.project, text=" ".join(record.profile.split()[:4]))
    assert record_search(cast.project, text=record.external_id).filter(pk=record.pk).exists()


def test_indexing_again_changes_nothing(cast: Cast, rjudge_dir: Path) -> None:
    import_path(actor=cast.manager, project=cast.project, path=rjudge_dir / "IoT")
    search_index_update(project_id=cast.project.pk)

    assert search_index_update(project_id=cast.project.pk) == 0


def test_the_record_list_says_while_recent_records_cannot_be_found(
    cast: Cast, rjudge_dir: Path
) -> None:
    import_path(actor=cast.manager, project=cast.project, path=rjudge_dir / "IoT")
    client = cast.client_for("reviewer")
    url = f"/p/{cast.project.slug}/records/"

    before = client.get(url, {"q": "the"}).content.decode()
    search_index_update(project_id=cast.project.pk)
    after = client.get(url, {"q": "the"}).content.decode()

    assert "The text of 30 records imported recently is still being indexed" in before
    assert "still being indexed" not in after
    assert "still being indexed" not in client.get(url).content.decode()


@pytest.mark.django_db(transaction=True)
def test_chunks_indexed_on_parallel_connections_find_what_one_connection_finds(
    cast: Cast, rjudge_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_path(actor=cast.manager, project=cast.project, path=rjudge_dir / "Finance")
    # Small chunks, so that several are written at once by the indexing's own threads.
    monkeypatch.setattr(search, "SEARCH_CHUNK", 10)
    assert not connection.in_atomic_block

    assert search_index_update(project_id=cast.project.pk) == 126

    parallel = dict(RecordSearchText.objects.values_list("record_id", "vector"))
    RecordSearchText.objects.all().delete()
    with transaction.atomic():
        # Inside a transaction the indexing writes in this thread, on this connection.
        assert search_index_update(project_id=cast.project.pk) == 126
    assert dict(RecordSearchText.objects.values_list("record_id", "vector")) == parallel
    assert len(parallel) == 126
    assert records_not_yet_searchable(cast.project) == 0
    for record in cast.project.records.all()[:20]:
        assert record in record_search(cast.project, text=last_words(record))


@pytest.mark.parametrize(
    "text",
    [
        "shell-co.pdf a@b.org snake_case",
        '{"action": "DeleteEmails", "older_than_days": 30}',
        "   leading, trailing!!  ",
        "naïve café \u2013 ünïcode",
        "tab\tand\nnew lines_",
    ],
)
def test_words_are_separated_alike_whatever_the_text(text: str) -> None:
    assert words_of(text).split() == NOT_WORD.sub(" ", text).split()


def reltuples(model: type[Record] | type[RecordSearchText]) -> float:
    """The row count PostgreSQL's planner believes the model's table has."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [model._meta.db_table])
        return cursor.fetchone()[0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's statistics")
def test_a_large_import_and_its_indexing_leave_the_planner_the_tables_as_they_are(
    cast: Cast, rjudge_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A large write is 10,000 rows; an R-Judge category's records stand for one here. ANALYZE
    # writes its counts in place, past the test's rollback: two imports, so that the second
    # counts are this test's alone.
    monkeypatch.setattr(table_statistics, "LARGE_WRITE", 20)

    for category, records in (("Finance", 126), ("IoT", 126 + 30)):
        import_path(actor=cast.manager, project=cast.project, path=rjudge_dir / category)
        assert reltuples(Record) == Record.objects.count() == records

        search_index_update(project_id=cast.project.pk)
        assert reltuples(RecordSearchText) == RecordSearchText.objects.count() == records


def all_visible_pages(model: type[Record]) -> int:
    """The pages of the model's table that PostgreSQL may answer for from an index alone."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relallvisible FROM pg_class WHERE relname = %s", [model._meta.db_table]
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_large_import_outside_a_transaction_leaves_its_records_countable_from_an_index(
    cast: Cast, rjudge_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(table_statistics, "LARGE_WRITE", 20)
    assert all_visible_pages(Record) == 0

    import_path(actor=cast.manager, project=cast.project, path=rjudge_dir / "Finance")

    # Vacuumed as well as analysed: the pages the import wrote are marked all-visible.
    assert all_visible_pages(Record) > 0
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN SELECT count(*) FROM curation_record WHERE project_id = %s", [cast.project.pk]
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Index Only Scan" in plan, plan
