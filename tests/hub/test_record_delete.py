"""Managers delete records chosen in the record list: a page first says how many records and
how many labels, verdicts and disagreements go with them; records in a release are refused,
naming the release; the deletion is audited."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from curation.models import AuditEvent, Record
from curation.services.record_deletion import RecordDeletion
from review.models import Disagreement
from tests.conftest import Cast
from tests.factories import ProjectFactory
from tests.releases.helpers import built_release, label, record

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path: Path) -> None:
    # The release built here writes its files.
    settings.MEDIA_ROOT = tmp_path / "media"


def delete(cast: Cast, persona: str, records: list[Record], **fields):
    list_url = reverse("hub:record_list", args=[cast.project.slug]) + "?gold_label=safe"
    return cast.client_for(persona).post(
        reverse("hub:record_bulk", args=[cast.project.slug]),
        {"action": "delete", "records": [r.pk for r in records], "back": list_url, **fields},
        follow=True,
    )


def test_the_confirmation_counts_the_records_and_what_goes_with_them(cast: Cast) -> None:
    record(cast.project, 1)
    chosen, also_chosen = record(cast.project, 2), record(cast.project, 3)
    label(chosen, cast.annotator, "safe")
    label(also_chosen, cast.annotator, "unsafe")
    Disagreement.objects.create(project=cast.project, record=chosen, kind="annotators_split")

    page = delete(cast, "manager", [chosen, also_chosen]).content.decode()

    counted = "2 records, with 2 labels, no verdict, 1 disagreement and no adjudication"
    assert f"This deletes <strong>{counted}</strong>." in page
    assert Record.objects.filter(project=cast.project).count() == 3


def test_confirmed_the_records_go_with_their_labels_and_are_audited(cast: Cast) -> None:
    kept, chosen = record(cast.project, 1), record(cast.project, 2)
    label(chosen, cast.annotator, "safe")
    label(kept, cast.annotator, "safe")

    response = delete(cast, "manager", [chosen], confirm="yes")

    assert list(Record.objects.filter(project=cast.project)) == [kept]
    assert kept.annotations.count() == 1
    page = response.content.decode()
    assert "Deleted 1 record, with 1 label, no verdict" in page
    assert response.redirect_chain[-1][0].endswith("?gold_label=safe")
    event = AuditEvent.objects.get(action="curation.records.deleted")
    assert event.actor == cast.manager
    assert event.before["records"] == [chosen.external_id]
    assert event.before["labels"] == 1


def test_records_in_a_release_are_refused_naming_the_release(cast: Cast) -> None:
    released = record(cast.project, 1)
    built_release(cast.project, cast.manager, version="1.0.0")
    other = record(cast.project, 2)

    page = delete(cast, "manager", [released, other]).content.decode()
    confirmed = delete(cast, "manager", [released, other], confirm="yes").content.decode()

    assert "These records cannot be deleted" in page
    assert f"Release 1.0.0: {released.external_id}" in page
    assert 'name="confirm"' not in page
    assert f"release 1.0.0: {released.external_id}" in confirmed
    assert Record.objects.filter(project=cast.project).count() == 2
    assert not AuditEvent.objects.filter(action="curation.records.deleted").exists()


def test_only_the_projects_records_are_deleted(cast: Cast) -> None:
    elsewhere = record(ProjectFactory(), 1)
    mine = record(cast.project, 2)

    delete(cast, "manager", [elsewhere, mine], confirm="yes")

    assert Record.objects.filter(pk=elsewhere.pk).exists()
    assert not Record.objects.filter(pk=mine.pk).exists()


def test_deleting_all_that_match_is_not_offered(cast: Cast) -> None:
    record(cast.project, 1)

    response = delete(cast, "manager", [], scope="matching", confirm="yes")

    assert "Tick the records to delete" in response.content.decode()
    assert Record.objects.filter(project=cast.project).count() == 1


@pytest.mark.parametrize("persona", ["reviewer", "annotator"])
def test_only_managers_delete_records(cast: Cast, persona: str) -> None:
    chosen = record(cast.project, 1)

    response = delete(cast, persona, [chosen], confirm="yes")

    assert response.status_code == 403
    assert Record.objects.filter(pk=chosen.pk).exists()


def test_a_refusal_names_twenty_records_of_a_release_and_counts_the_others() -> None:
    held = RecordDeletion(
        records=25, going_with=[], in_releases={"1.0.0": [f"r{n}" for n in range(25)]}
    )

    assert held.refusal() == (
        "Records in a release cannot be deleted (release 1.0.0: "
        + ", ".join(f"r{n}" for n in range(20))
        + " and 5 more)."
    )
