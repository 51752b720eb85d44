"""Helpers for the release tests: labelled records, releases built in the test's process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F

from annotation.models import Annotation
from curation.models import Project, Record
from curation.services.imports import import_path
from releases.models import LabelBasis, Release
from releases.services import release_build, release_create, release_options
from tests.annotation.annotators import add_annotator
from tests.factories import RecordFactory, rjudge_record


def annotators(project: Project, count: int) -> list[AbstractBaseUser]:
    return [add_annotator(project, f"labeller{n}") for n in range(1, count + 1)]


def record(project: Project, number: int, **source: Any) -> Record:
    return RecordFactory(project=project, source=rjudge_record(number, **source), searchable=False)


def label(
    record: Record,
    annotator: AbstractBaseUser,
    verdict: str,
    *,
    safety: int | None = None,
    helpfulness: int | None = None,
    risk_description: str = "",
) -> Annotation:
    """A submitted label, written as the annotation service stores it (with the record's count
    of labels and its votes, by which the queue, releases and the record list know how far it
    is)."""
    votes = {f"{verdict}_votes": F(f"{verdict}_votes") + 1} if verdict != "unsure" else {}
    Record.objects.filter(pk=record.pk).update(annotation_count=F("annotation_count") + 1, **votes)
    return Annotation.objects.create(
        project=record.project,
        record=record,
        annotator=annotator,
        verdict=verdict,
        safety_score=safety,
        helpfulness_score=helpfulness,
        risk_description=risk_description,
    )


def built_release(
    project: Project, actor: AbstractBaseUser, version: str = "1.0.0", **kwargs: Any
) -> Release:
    """A release built in the test's process; one that holds nothing is allowed, for tests of
    what every release has (its pages, its card, who sees it). Unless the test gives options,
    records still short of their labels go in, as the tests of what a release holds want."""
    kwargs.setdefault("allow_empty", True)
    kwargs.setdefault("options", release_options(leave_out_in_annotation=False))
    release = release_create(
        actor=actor, project=project, version=version, license="CC BY 4.0", **kwargs
    )
    return release_build(release.pk)


def rjudge_gold_release(project: Project, actor: AbstractBaseUser, rjudge_dir: Path) -> Release:
    """The real R-Judge data imported and republished with its gold labels (records still to be
    labelled included, as a republication means), as made: before its files are built."""
    import_path(actor=actor, project=project, path=rjudge_dir)
    return release_create(
        actor=actor,
        project=project,
        version="1.0.0",
        license="CC BY-NC-SA 4.0",
        label_basis=LabelBasis.GOLD,
        options=release_options(leave_out_in_annotation=False),
    )
