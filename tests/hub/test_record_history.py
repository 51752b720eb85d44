"""A record's history reads as people would say it: who labelled it what, who changed their
label from what to what, who settled it, which import's version was taken and what it changed;
the import report shows each changed field's old and new value. Values are hostile text, shown
escaped."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from annotation.services.labels import Label, annotation_submit, annotation_update
from annotation.services.queue import lease_next_record, records_labels_request
from curation.models import ImportBatch, Record
from curation.services.imports import import_path
from curation.services.record_changes import record_changes_decide
from review.services.adjudications import score_adjudication_create
from tests.conftest import Cast
from tests.curation.import_files import rjudge_bytes, write_file
from tests.factories import RecordFactory, rjudge_record

pytestmark = pytest.mark.django_db

HOSTILE = "<script>alert('x')</script> it deleted mail"


def history_of(cast: Cast, record: Record) -> str:
    url = reverse("hub:record_detail", args=[cast.project.slug, record.pk])
    page = cast.client_for("manager").get(url).content.decode()
    return page[page.index('id="history-head"') :]


def test_a_changed_label_shows_what_it_was_and_what_it_is(cast: Cast) -> None:
    record = RecordFactory(project=cast.project)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    annotation = annotation_submit(
        lease=lease, actor=cast.annotator, label=Label("safe", risk_description="Harmless.")
    )
    annotation_update(
        annotation=annotation,
        actor=cast.annotator,
        label=Label("unsafe", risk_description=HOSTILE),
        version=annotation.version,
    )
    records_labels_request(actor=cast.manager, project=cast.project, record_ids=[record.pk], more=1)

    history = history_of(cast, record)

    name = cast.annotator.username
    assert f"<strong>{name}</strong> labelled it safe" in history
    assert f"<strong>{name}</strong> changed their label" in history
    assert "<dt>verdict</dt>" in history and "<del>safe</del> → <ins>unsafe</ins>" in history
    assert "<del>Harmless.</del>" in history
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; it deleted mail" in history
    assert "<script>alert" not in history
    assert f"<strong>{cast.manager.username}</strong> asked for 1 more label" in history
    # Newest first.
    assert history.index("asked for") < history.index("changed their label")
    assert history.index("changed their label") < history.index("labelled it safe")


def test_settled_scores_are_told_by_scale(cast: Cast) -> None:
    record = RecordFactory(project=cast.project)
    score_adjudication_create(
        actor=cast.reviewer,
        project=cast.project,
        record=record,
        scores={"safety": 0, "helpfulness": 2},
        reason="The agent wiped the disk.",
    )

    history = history_of(cast, record)

    assert f"<strong>{cast.reviewer.username}</strong> settled its scores:" in history
    assert "settled its scores: safety 0, helpfulness 2" in history
    assert "The agent wiped the disk." in history


@pytest.fixture
def taken(cast: Cast, tmp_path: Path) -> ImportBatch:
    """Record 1 imported, imported again with its label flipped and a hostile description,
    and the new version taken by the manager."""
    first = write_file(tmp_path / "first" / "mail.json", rjudge_bytes([rjudge_record(1)]))
    import_path(actor=cast.manager, project=cast.project, path=first)
    flipped = rjudge_record(1, label=0, risk_description=HOSTILE)
    again = write_file(tmp_path / "again" / "mail.json", rjudge_bytes([flipped]))
    batch = import_path(actor=cast.manager, project=cast.project, path=again)
    return batch


def test_the_import_report_shows_old_and_new_values_before_and_after_the_decision(
    cast: Cast, taken: ImportBatch
) -> None:
    url = reverse("curation:import_detail", args=[cast.project.slug, taken.pk])
    client = cast.client_for("manager")

    pending = client.get(url).content.decode()
    record_changes_decide(actor=cast.manager, batch=taken, take=True)
    decided = client.get(url).content.decode()

    for page in (pending, decided):
        assert "<dt>label</dt><dd><del>1</del> → <ins>0</ins></dd>" in page
        assert "<del>The agent deleted mails without asking.</del>" in page
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; it deleted mail</ins>" in page
        assert "<script>alert" not in page


def test_a_taken_version_is_in_the_history_with_its_changes(cast: Cast, taken: ImportBatch) -> None:
    record_changes_decide(actor=cast.manager, batch=taken, take=True)

    history = history_of(cast, Record.objects.get(external_id="1"))

    manager = cast.manager.username
    said = f"<strong>{manager}</strong> took its new version from import {taken.pk} of mail.json"
    assert said in history
    assert "<dt>label</dt>" in history and "<del>1</del> → <ins>0</ins>" in history
    assert "<script>alert" not in history
