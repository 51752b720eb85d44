"""Claiming the next record: which one, how many annotators a record gets, leases that expire."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Lease
from annotation.selectors import annotator_progress
from annotation.services.labels import Label, annotation_submit
from annotation.services.queue import (
    lease_draft_save,
    lease_next_record,
    lease_skip,
    leases_reclaim,
)
from curation.errors import Conflict, DomainError
from tests.annotation.annotators import add_annotator, counts, label_next, make_records
from tests.conftest import Cast


def expire(lease: Lease) -> None:
    Lease.objects.filter(pk=lease.pk).update(expires_at=timezone.now() - timedelta(minutes=1))


def test_it_hands_out_records_in_id_order_when_none_has_a_label(cast: Cast) -> None:
    first, second = make_records(cast.project, 2)

    lease = lease_next_record(project=cast.project, annotator=cast.annotator)

    assert lease.record_id == first.pk
    assert lease.state == Lease.State.ACTIVE
    assert counts(first) == (0, 1)
    assert counts(second) == (0, 0)


def test_it_offers_the_record_closest_to_completion_first(cast: Cast) -> None:
    cast.project.overlap = 3
    cast.project.save()
    _, second, third = make_records(cast.project, 3)
    ann, bob = add_annotator(cast.project, "ann"), add_annotator(cast.project, "bob")
    # The third record has two labels, the second one.
    for annotator in (ann, bob):
        Lease.objects.create(
            project=cast.project,
            record=third,
            annotator=annotator,
            state=Lease.State.SUBMITTED,
            expires_at=timezone.now(),
            opened_at=timezone.now(),
        )
    third.__class__.objects.filter(pk=third.pk).update(annotation_count=2)
    second.__class__.objects.filter(pk=second.pk).update(annotation_count=1)

    assert lease_next_record(project=cast.project, annotator=cast.annotator).record_id == third.pk
    label_next(cast.project, cast.annotator)
    assert lease_next_record(project=cast.project, annotator=cast.annotator).record_id == second.pk


def test_it_returns_the_live_lease_rather_than_a_second_one(cast: Cast) -> None:
    make_records(cast.project, 2)

    first = lease_next_record(project=cast.project, annotator=cast.annotator)
    again = lease_next_record(project=cast.project, annotator=cast.annotator)

    assert again.pk == first.pk
    assert Lease.objects.filter(annotator=cast.annotator).count() == 1


def test_no_record_gets_more_than_k_annotators(cast: Cast) -> None:
    (record,) = make_records(cast.project, 1)
    ann, bob = add_annotator(cast.project, "ann"), add_annotator(cast.project, "bob")

    assert lease_next_record(project=cast.project, annotator=cast.annotator) is not None
    label_next(cast.project, ann)

    assert lease_next_record(project=cast.project, annotator=bob) is None
    assert counts(record) == (1, 1)


def test_it_never_offers_a_record_twice_to_the_same_annotator(cast: Cast) -> None:
    first, second = make_records(cast.project, 2)
    label_next(cast.project, cast.annotator)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    lease_skip(lease=lease, actor=cast.annotator, reason="Not my language.")

    assert lease_next_record(project=cast.project, annotator=cast.annotator) is None
    assert counts(first) == (1, 0)
    assert counts(second) == (0, 0)


def test_a_skip_takes_a_reason(cast: Cast) -> None:
    (record,) = make_records(cast.project, 1)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)

    with pytest.raises(DomainError, match="Say why"):
        lease_skip(lease=lease, actor=cast.annotator, reason="   ")

    lease.refresh_from_db()
    assert lease.state == Lease.State.ACTIVE
    assert counts(record) == (0, 1)


def test_a_skip_frees_the_slot_for_someone_else(cast: Cast) -> None:
    cast.project.overlap = 1
    cast.project.save()
    (record,) = make_records(cast.project, 1)
    ann = add_annotator(cast.project, "ann")
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    assert lease_next_record(project=cast.project, annotator=ann) is None

    skipped = lease_skip(lease=lease, actor=cast.annotator, reason="Unreadable.")

    assert skipped.skip_reason == "Unreadable."
    assert lease_next_record(project=cast.project, annotator=ann).record_id == record.pk


def test_expired_leases_are_reclaimed_and_their_slots_freed(cast: Cast) -> None:
    cast.project.overlap = 1
    cast.project.save()
    (record,) = make_records(cast.project, 1)
    ann = add_annotator(cast.project, "ann")
    stale = lease_next_record(project=cast.project, annotator=cast.annotator)
    expire(stale)

    lease = lease_next_record(project=cast.project, annotator=ann)

    assert lease.record_id == record.pk
    stale.refresh_from_db()
    assert stale.state == Lease.State.EXPIRED
    assert counts(record) == (0, 1)


def test_an_expired_lease_comes_back_to_its_annotator_with_its_draft(cast: Cast) -> None:
    (record,) = make_records(cast.project, 1)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    lease_draft_save(lease=lease, draft={"verdict": "unsafe", "risk_description": "It leaks."})
    expire(lease)
    assert leases_reclaim(project=cast.project) == 1
    assert counts(record) == (0, 0)

    again = lease_next_record(project=cast.project, annotator=cast.annotator)

    assert again.pk == lease.pk
    assert again.state == Lease.State.ACTIVE
    assert again.expires_at > timezone.now()
    assert again.draft == {"verdict": "unsafe", "risk_description": "It leaks."}
    assert counts(record) == (0, 1)


def test_saving_a_draft_extends_the_lease(cast: Cast) -> None:
    make_records(cast.project, 1)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    Lease.objects.filter(pk=lease.pk).update(expires_at=timezone.now() + timedelta(minutes=1))

    assert lease_draft_save(lease=lease, draft={"verdict": "safe"})

    lease.refresh_from_db()
    assert lease.expires_at > timezone.now() + timedelta(minutes=cast.project.lease_minutes - 1)


def test_a_draft_is_refused_once_the_record_is_labelled(cast: Cast) -> None:
    make_records(cast.project, 1)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    annotation_submit(lease=lease, actor=cast.annotator, label=Label("safe"))

    assert not lease_draft_save(lease=lease, draft={"verdict": "unsafe"})


def test_a_skipped_lease_cannot_be_skipped_again(cast: Cast) -> None:
    make_records(cast.project, 1)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    lease_skip(lease=lease, actor=cast.annotator, reason="Unclear.")

    with pytest.raises(Conflict):
        lease_skip(lease=lease, actor=cast.annotator, reason="Unclear.")


def test_it_returns_none_for_a_project_without_records(cast: Cast) -> None:
    assert lease_next_record(project=cast.project, annotator=cast.annotator) is None


def test_what_is_left_counts_the_records_the_annotator_may_still_be_given(cast: Cast) -> None:
    records = make_records(cast.project, 7)
    ann, bob = add_annotator(cast.project, "ann"), add_annotator(cast.project, "bob")
    label_next(cast.project, ann)
    label_next(cast.project, bob)
    assert label_next(cast.project, cast.annotator).record_id == records[1].pk
    lease_skip(
        lease=lease_next_record(project=cast.project, annotator=cast.annotator),
        actor=cast.annotator,
        reason="Unclear.",
    )
    expire(lease_next_record(project=cast.project, annotator=cast.annotator))
    leases_reclaim(project=cast.project)
    assert label_next(cast.project, ann).record_id == records[1].pk
    assert label_next(cast.project, ann).record_id == records[2].pk
    held = lease_next_record(project=cast.project, annotator=cast.annotator)

    progress = annotator_progress(cast.project, cast.annotator)

    # Records 1 and 2 are complete, 3 was skipped; 4 came back after its lease lapsed and is
    # held; 5, 6 and 7 are untouched.
    assert held.record_id == records[3].pk
    assert (progress.done, progress.skipped, progress.remaining) == (1, 1, 4)
