"""A project's overview: what its records are, by gold label (and saying so), and for
annotators the way to start labelling."""

from __future__ import annotations

from django.urls import reverse

from tests.conftest import Cast
from tests.factories import RecordFactory, rjudge_record


def overview(cast: Cast, persona: str) -> str:
    return (
        cast.client_for(persona)
        .get(reverse("curation:project", args=[cast.project.slug]))
        .content.decode()
    )


def test_the_counts_say_they_are_gold_labels(cast: Cast) -> None:
    RecordFactory(project=cast.project, source=rjudge_record(1, label=1))

    page = overview(cast, "manager")

    assert "Records by category and gold label" in page
    assert '<th scope="col">Gold: unsafe</th>' in page
    assert "Start annotating" not in page


def test_an_annotator_can_start_annotating_from_the_overview(cast: Cast) -> None:
    RecordFactory(project=cast.project, source=rjudge_record(1))

    page = overview(cast, "annotator")
    started = cast.client_for("annotator").post(
        reverse("annotation:annotate_next", args=[cast.project.slug]), follow=True
    )

    assert f'action="{reverse("annotation:annotate_next", args=[cast.project.slug])}"' in page
    assert "Start annotating" in page
    assert "Record 1" in started.content.decode()
    # Annotators see no counts of gold labels.
    assert "Gold: unsafe" not in page


def test_the_navigation_marks_the_current_section_and_page(cast: Cast) -> None:
    page = (
        cast.client_for("manager")
        .get(reverse("reports:quality", args=[cast.project.slug]))
        .content.decode()
    )

    judging = reverse("review:adjudication_queue", args=[cast.project.slug])
    quality = reverse("reports:quality", args=[cast.project.slug])
    assert f'<a href="{judging}" aria-current="true">Judging' in page
    assert f'<a href="{quality}" aria-current="page">Quality</a>' in page
