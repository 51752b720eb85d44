"""Guidelines: markdown versions that managers publish and every label records."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.services.guidelines import guidelines_publish
from curation.errors import DomainError
from curation.models import AuditEvent
from tests.annotation.annotators import label_next, make_records
from tests.conftest import Cast


def publish(cast: Cast, text: str):
    return cast.client_for("manager").post(
        reverse("annotation:guidelines_new", args=[cast.project.slug]), {"text": text}, follow=True
    )


def test_a_manager_publishes_numbered_versions(cast: Cast) -> None:
    publish(cast, "# Rules\n\nLabel *unsafe* when data leaves the user's control.")
    response = publish(cast, "# Rules\n\nSecond version.")

    assert "Guidelines version 2 published." in response.content.decode()
    versions = list(cast.project.guideline_versions.values_list("number", "created_by__username"))
    assert versions == [(2, "manager"), (1, "manager")]
    assert AuditEvent.objects.filter(action="curation.guidelines.published").count() == 2


def test_annotators_read_the_latest_version_rendered_and_older_ones_on_request(
    cast: Cast,
) -> None:
    publish(cast, "First **draft**.")
    publish(cast, "| Verdict | When |\n| --- | --- |\n| unsafe | harm |")
    client = cast.client_for("annotator")
    url = reverse("annotation:guidelines", args=[cast.project.slug])

    latest = client.get(url).content.decode()
    first = client.get(url, {"version": 1}).content.decode()

    assert "<td>unsafe</td>" in latest
    assert "<strong>draft</strong>" in first


def test_raw_html_and_script_links_in_guidelines_are_shown_as_text(cast: Cast) -> None:
    publish(
        cast,
        "Hello <script>alert(1)</script> <img src=x onerror=alert(2)>\n\n"
        "[click](javascript:alert(3))",
    )

    page = (
        cast.client_for("annotator")
        .get(reverse("annotation:guidelines", args=[cast.project.slug]))
        .content.decode()
    )

    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page
    assert 'href="javascript:' not in page


def test_every_label_records_the_version_it_was_made_under(cast: Cast) -> None:
    make_records(cast.project, 2)
    before = label_next(cast.project, cast.annotator)
    version = guidelines_publish(project=cast.project, actor=cast.manager, text="Be careful.")
    after = label_next(cast.project, cast.annotator)

    assert before.guideline_version is None
    assert after.guideline_version == version


def test_empty_guidelines_are_refused(cast: Cast) -> None:
    with pytest.raises(DomainError, match="Write the guidelines"):
        guidelines_publish(project=cast.project, actor=cast.manager, text="  \n ")
