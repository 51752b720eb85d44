"""Managers' progress page: records by labels, per annotator, per day, median time."""

from __future__ import annotations

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from annotation.models import Annotation
from annotation.services.queue import lease_next_record, lease_skip
from tests.annotation.annotators import add_annotator, label_next, make_records
from tests.conftest import Cast


def test_the_progress_page_shows_records_by_labels_and_each_annotator(cast: Cast) -> None:
    make_records(cast.project, 3)
    ann = add_annotator(cast.project, "ann")
    for annotator in (cast.annotator, ann):
        label_next(cast.project, annotator)
    label_next(cast.project, ann)
    Annotation.objects.filter(annotator=ann).update(time_spent_ms=30_000)
    Annotation.objects.filter(annotator=cast.annotator).update(time_spent_ms=12_000)
    lease_skip(
        lease=lease_next_record(project=cast.project, annotator=cast.annotator),
        actor=cast.annotator,
        reason="Unclear.",
    )

    page = (
        cast.client_for("manager")
        .get(reverse("annotation:annotation_progress", args=[cast.project.slug]))
        .content.decode()
    )

    # One record has 2 labels (complete), one has 1, one has none.
    assert '<tr><th scope="row">0 labels</th><td>1</td></tr>' in page
    assert '<tr><th scope="row">1 label</th><td>1</td></tr>' in page
    assert '<tr><th scope="row">2 labels</th><td>1</td></tr>' in page
    assert '<tr><th scope="row">ann</th><td>2</td><td>0</td><td>30.0 s</td></tr>' in page
    assert '<tr><th scope="row">annotator</th><td>1</td><td>1</td><td>12.0 s</td></tr>' in page
    assert "<dt>Median time per record</dt><dd>30.0 s</dd>" in page
    today = timezone.localdate().strftime("%b %d")
    assert f'<tr><th scope="row">{today}</th><td>3</td></tr>' in page


def test_labels_per_day_cover_the_last_30_days(cast: Cast) -> None:
    make_records(cast.project, 1)
    annotation = label_next(cast.project, cast.annotator)
    Annotation.objects.filter(pk=annotation.pk).update(
        created_at=timezone.now() - timedelta(days=3)
    )

    page = (
        cast.client_for("manager")
        .get(reverse("annotation:annotation_progress", args=[cast.project.slug]))
        .content.decode()
    )

    day = (timezone.localdate() - timedelta(days=3)).strftime("%b %d")
    assert f'<tr><th scope="row">{day}</th><td>1</td></tr>' in page
    assert page.count("Labels per day, last 30 days") >= 1
