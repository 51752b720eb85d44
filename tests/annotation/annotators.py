"""Helpers for the annotation tests: more annotators, records to label, labels."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from annotation.services.labels import Label, annotation_submit
from annotation.services.queue import lease_next_record
from curation.models import Project, Record, Role
from curation.services.projects import membership_grant
from tests.factories import RecordFactory, UserFactory


def add_annotator(project: Project, username: str) -> AbstractBaseUser:
    user = UserFactory(username=username)
    membership_grant(actor=None, project=project, user=user, role=Role.ANNOTATOR)
    return user


def make_records(project: Project, count: int, **kwargs: object) -> list[Record]:
    return [RecordFactory(project=project, searchable=False, **kwargs) for _ in range(count)]


def label_next(
    project: Project, annotator: AbstractBaseUser, verdict: str = "safe", **fields: object
):
    """Claim the annotator's next record and label it; returns the annotation."""
    lease = lease_next_record(project=project, annotator=annotator)
    assert lease is not None, f"nothing left for {annotator}"
    return annotation_submit(lease=lease, actor=annotator, label=Label(verdict, **fields))


def counts(record: Record) -> tuple[int, int]:
    """The record's queue counts as stored: (labels, live leases)."""
    record.refresh_from_db(fields=["annotation_count", "lease_count"])
    return record.annotation_count, record.lease_count
