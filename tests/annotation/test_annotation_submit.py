"""Submitting a label: what it records, what it refuses, and who hears of it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from annotation.models import Lease
from annotation.services.guidelines import annotation_settings_update, guidelines_publish
from annotation.services.labels import Label, annotation_submit
from annotation.services.queue import lease_draft_save, lease_next_record
from annotation.signals import annotation_saved
from curation.errors import Conflict
from curation.models import AuditEvent
from tests.annotation.annotators import add_annotator, counts, label_next, make_records
from tests.conftest import Cast
from tests.factories import ProjectFactory


def claim(cast: Cast, annotator=None) -> Lease:
    return lease_next_record(project=cast.project, annotator=annotator or cast.annotator)


def test_it_records_the_label_with_its_guidelines_version_and_time(cast: Cast) -> None:
    (record,) = make_records(cast.project, 1)
    guidelines_publish(project=cast.project, actor=cast.manager, text="# Version one")
    version = guidelines_publish(project=cast.project, actor=cast.manager, text="# Version two")
    lease = claim(cast)
    Lease.objects.filter(pk=lease.pk).update(opened_at=timezone.now() - timedelta(seconds=42))
    privacy = cast.project.risk_types.get(slug="privacy-leakage")

    annotation = annotation_submit(
        lease=lease,
        actor=cast.annotator,
        label=Label(
            "unsafe",
            risk_types=(privacy,),
            risk_description="It mails the password out.",
            evidence_turns=(2, 3, 2),
        ),
    )

    annotation.refresh_from_db()
    assert annotation.verdict == "unsafe"
    assert list(annotation.risk_types.all()) == [privacy]
    assert annotation.evidence_turns == [2, 3]
    assert annotation.guideline_version == version
    assert 42_000 <= annotation.time_spent_ms < 52_000
    assert annotation.version == 1
    assert counts(record) == (1, 0)
    lease.refresh_from_db()
    assert lease.state == Lease.State.SUBMITTED


def test_time_spent_is_capped_at_the_lease_time(cast: Cast) -> None:
    make_records(cast.project, 1)
    lease = claim(cast)
    Lease.objects.filter(pk=lease.pk).update(opened_at=timezone.now() - timedelta(days=2))

    annotation = annotation_submit(lease=lease, actor=cast.annotator, label=Label("safe"))

    assert annotation.time_spent_ms == cast.project.lease_minutes * 60 * 1000


def test_it_writes_an_audit_event_and_announces_the_label_in_its_transaction(
    cast: Cast, transactional_db: None
) -> None:
    # Without the test's own transaction around it, so that the one seen is the label's.
    make_records(cast.project, 1)
    heard = []

    def receiver(sender, annotation, created, **kwargs) -> None:
        # What receivers write commits with the label: they hear of it inside its transaction.
        heard.append((annotation.pk, created, connection.in_atomic_block))

    annotation_saved.connect(receiver)
    try:
        annotation = annotation_submit(
            lease=claim(cast), actor=cast.annotator, label=Label("unsure")
        )
    finally:
        annotation_saved.disconnect(receiver)

    assert heard == [(annotation.pk, True, True)]
    event = AuditEvent.objects.get(action="curation.annotation.created")
    assert event.actor == cast.annotator
    assert event.object_id == str(annotation.pk)
    assert event.before is None
    assert event.after["verdict"] == "unsure"
    assert event.after["version"] == 1


@pytest.mark.parametrize(
    ("label", "field"),
    [
        (Label("unsafe"), "risk_description"),
        (Label("unsafe", risk_description="  "), "risk_description"),
        (Label("maybe"), "verdict"),
        (Label("safe", evidence_turns=(4,)), "evidence_turns"),
        (Label("safe", evidence_turns=(0,)), "evidence_turns"),
        (Label("safe", safety_score=2), "safety_score"),
    ],
)
def test_it_refuses_an_invalid_label_and_keeps_the_lease(cast: Cast, label, field) -> None:
    (record,) = make_records(cast.project, 1)
    lease = claim(cast)

    with pytest.raises(ValidationError) as refused:
        annotation_submit(lease=lease, actor=cast.annotator, label=label)

    assert field in refused.value.message_dict
    assert counts(record) == (0, 1)
    lease.refresh_from_db()
    assert lease.state == Lease.State.ACTIVE


def test_scores_are_required_when_the_project_asks_for_them(cast: Cast) -> None:
    cast.project.ask_safety_score = True
    cast.project.ask_helpfulness_score = True
    cast.project.save()
    make_records(cast.project, 1)

    with pytest.raises(ValidationError) as refused:
        annotation_submit(
            lease=claim(cast), actor=cast.annotator, label=Label("safe", safety_score=3)
        )

    assert list(refused.value.message_dict) == ["helpfulness_score"]


def test_risk_types_of_another_project_are_refused(cast: Cast) -> None:
    make_records(cast.project, 1)
    foreign = ProjectFactory().risk_types.create(slug="privacy-leakage", name="Privacy")

    with pytest.raises(ValidationError) as refused:
        annotation_submit(
            lease=claim(cast), actor=cast.annotator, label=Label("safe", risk_types=(foreign,))
        )

    assert "risk_types" in refused.value.message_dict


def test_a_lease_is_labelled_once(cast: Cast) -> None:
    make_records(cast.project, 2)
    lease = claim(cast)
    annotation_submit(lease=lease, actor=cast.annotator, label=Label("safe"))

    with pytest.raises(Conflict, match="already submitted"):
        annotation_submit(
            lease=lease, actor=cast.annotator, label=Label("unsafe", risk_description="x")
        )


def test_only_the_leaseholder_may_label(cast: Cast) -> None:
    make_records(cast.project, 1)
    lease = claim(cast)
    ann = add_annotator(cast.project, "ann")

    with pytest.raises(Conflict, match="not yours"):
        annotation_submit(lease=lease, actor=ann, label=Label("safe"))


def expire_and_reclaim(cast: Cast, lease: Lease) -> None:
    Lease.objects.filter(pk=lease.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    # Someone else's claim reclaims it.
    claim(cast, add_annotator(cast.project, f"late{lease.pk}"))


def test_a_label_on_an_expired_lease_is_accepted_while_the_record_has_a_free_slot(
    cast: Cast,
) -> None:
    (record,) = make_records(cast.project, 1)
    lease = claim(cast)
    expire_and_reclaim(cast, lease)
    assert counts(record) == (0, 1)

    annotation_submit(lease=lease, actor=cast.annotator, label=Label("safe"))

    assert counts(record) == (1, 1)
    lease.refresh_from_db()
    assert lease.state == Lease.State.SUBMITTED


def test_a_label_on_an_expired_lease_is_refused_once_others_filled_the_record_and_kept_as_draft(
    cast: Cast,
) -> None:
    cast.project.overlap = 1
    cast.project.save()
    (record,) = make_records(cast.project, 1)
    lease = claim(cast)
    lease_draft_save(lease=lease, draft={"verdict": "safe"})
    expire_and_reclaim(cast, lease)

    with pytest.raises(Conflict, match="expired"):
        annotation_submit(
            lease=lease,
            actor=cast.annotator,
            label=Label("unsafe", risk_description="Deletes the backups."),
        )

    assert counts(record) == (0, 1)
    lease.refresh_from_db()
    assert lease.state == Lease.State.EXPIRED
    assert lease.draft["verdict"] == "unsafe"
    assert lease.draft["risk_description"] == "Deletes the backups."


def test_a_label_is_refused_when_k_was_lowered_below_the_records_labels_since_the_claim(
    cast: Cast,
) -> None:
    (record,) = make_records(cast.project, 1)
    label_next(cast.project, add_annotator(cast.project, "ann"))
    lease = claim(cast)
    annotation_settings_update(project=cast.project, actor=cast.manager, overlap=1)

    with pytest.raises(Conflict, match="all the labels it needs"):
        annotation_submit(lease=lease, actor=cast.annotator, label=Label("unsure"))

    # The record keeps its one label, the lease ends with the label as its draft, and the
    # record is not offered again.
    assert counts(record) == (1, 0)
    lease.refresh_from_db()
    assert (lease.state, lease.draft["verdict"]) == (Lease.State.EXPIRED, "unsure")
    cast.project.refresh_from_db()
    assert claim(cast) is None
