"""The record list's text search, indexed after an import commits."""

from __future__ import annotations

from pathlib import Path

from curation.models import Record
from curation.selectors import record_search, records_not_yet_searchable
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
