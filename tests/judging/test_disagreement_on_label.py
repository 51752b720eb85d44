"""A label that arrives is checked against the record's other labels at once."""

from __future__ import annotations

from curation.signals import annotation_saved
from judging.models import Disagreement
from tests.conftest import Cast
from tests.factories import RecordFactory, UserFactory
from tests.judging.opinions import annotate


def test_a_saved_label_that_splits_the_annotators_opens_a_disagreement(cast: Cast) -> None:
    record = RecordFactory(project=cast.project)
    annotate(record, UserFactory(), "unsafe")
    annotation = annotate(record, UserFactory(), "safe")

    annotation_saved.send(sender=type(annotation), annotation=annotation, created=True)

    assert Disagreement.objects.get(record=record).kind == Disagreement.Kind.ANNOTATORS_SPLIT


def test_a_changed_label_that_ends_the_split_resolves_it(cast: Cast) -> None:
    record = RecordFactory(project=cast.project)
    annotate(record, UserFactory(), "unsafe")
    annotation = annotate(record, UserFactory(), "safe")
    annotation_saved.send(sender=type(annotation), annotation=annotation, created=True)

    annotation = annotate(record, annotation.annotator, "unsafe")
    annotation_saved.send(sender=type(annotation), annotation=annotation, created=False)

    assert Disagreement.objects.get(record=record).state == Disagreement.State.RESOLVED
