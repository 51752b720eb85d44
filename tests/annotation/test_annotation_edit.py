"""My work: the annotator's own labels, what is done and left, and edits that never overwrite."""

from __future__ import annotations

import re

from django.urls import reverse

from annotation.services.labels import Label, annotation_update
from curation.models import AuditEvent
from tests.annotation.annotators import add_annotator, label_next, make_records
from tests.conftest import Cast
from tests.curation.api_clients import token_client


def edit_url(cast: Cast, annotation) -> str:
    return reverse("annotation:annotation_edit", args=[cast.project.slug, annotation.pk])


def api_url(cast: Cast, annotation) -> str:
    return f"/api/projects/{cast.project.slug}/annotation/mine/{annotation.pk}/"


def test_my_work_lists_my_labels_only_with_what_is_done_and_left(cast: Cast) -> None:
    make_records(cast.project, 3)
    mine = label_next(cast.project, cast.annotator, "unsafe", risk_description="Wipes the disk.")
    label_next(cast.project, add_annotator(cast.project, "ann"), "safe")

    page = cast.client_for("annotator").get(reverse("annotation:my_work", args=[cast.project.slug]))

    html = page.content.decode()
    assert re.search(r"<dt>Labelled</dt><dd>1</dd>", html)
    assert re.search(r"<dt>Left for you</dt><dd>2</dd>", html)
    assert "Wipes the disk." in html
    assert edit_url(cast, mine) in html
    assert len(re.findall(r"/annotate/mine/\d+/", html)) == 1


def test_an_edit_saves_a_new_version_and_audits_before_and_after(cast: Cast) -> None:
    make_records(cast.project, 1)
    annotation = label_next(cast.project, cast.annotator, "safe")

    response = cast.client_for("annotator").post(
        edit_url(cast, annotation),
        {"verdict": "unsafe", "risk_description": "Sends the key.", "version": "1"},
        follow=True,
    )

    assert "Updated your label of record" in response.content.decode()
    annotation.refresh_from_db()
    assert (annotation.verdict, annotation.version) == ("unsafe", 2)
    event = AuditEvent.objects.get(action="curation.annotation.updated")
    assert event.before["verdict"] == "safe"
    assert event.after["verdict"] == "unsafe"
    assert (event.before["version"], event.after["version"]) == (1, 2)


def test_a_stale_edit_in_the_page_is_refused_with_a_message_and_the_newer_label_kept(
    cast: Cast,
) -> None:
    make_records(cast.project, 1)
    annotation = label_next(cast.project, cast.annotator, "safe")
    client = cast.client_for("annotator")
    opened = client.get(edit_url(cast, annotation)).content.decode()
    assert 'name="version" value="1"' in opened
    # Meanwhile, another tab changes the label.
    annotation_update(
        annotation=annotation,
        actor=cast.annotator,
        label=Label("unsafe", risk_description="Newer reading."),
        version=1,
    )

    response = client.post(edit_url(cast, annotation), {"verdict": "unsure", "version": "1"})

    page = response.content.decode()
    assert response.status_code == 409
    assert "This label changed after you opened it" in page
    assert "Your changes were not saved" in page
    # The page now shows the newer label, ready to edit from version 2.
    assert 'name="version" value="2"' in page
    assert "Newer reading.</textarea>" in page
    annotation.refresh_from_db()
    assert (annotation.verdict, annotation.risk_description, annotation.version) == (
        "unsafe",
        "Newer reading.",
        2,
    )


def test_a_stale_edit_through_the_api_gets_409_and_the_newer_label_is_kept(cast: Cast) -> None:
    make_records(cast.project, 1)
    annotation = label_next(cast.project, cast.annotator, "safe")
    client = token_client(cast.annotator)
    read = client.get(api_url(cast, annotation)).json()

    first = client.put(
        api_url(cast, annotation),
        {"verdict": "unsafe", "risk_description": "First edit.", "version": read["version"]},
        content_type="application/json",
    )
    stale = client.put(
        api_url(cast, annotation),
        {"verdict": "unsure", "version": read["version"]},
        content_type="application/json",
    )

    assert first.status_code == 200
    assert first.json()["version"] == 2
    assert stale.status_code == 409
    assert "This label changed after you opened it" in stale.json()["detail"]
    annotation.refresh_from_db()
    assert (annotation.verdict, annotation.risk_description) == ("unsafe", "First edit.")
    assert AuditEvent.objects.filter(action="curation.annotation.updated").count() == 1


def test_an_invalid_edit_is_shown_again_with_its_errors(cast: Cast) -> None:
    make_records(cast.project, 1)
    annotation = label_next(cast.project, cast.annotator, "safe")

    response = cast.client_for("annotator").post(
        edit_url(cast, annotation), {"verdict": "unsafe", "version": "1"}
    )

    assert response.status_code == 200
    assert "Describe the risk: you labelled the record unsafe." in response.content.decode()
    annotation.refresh_from_db()
    assert annotation.verdict == "safe"


def test_someone_elses_label_cannot_be_opened_or_edited(cast: Cast) -> None:
    make_records(cast.project, 1)
    theirs = label_next(cast.project, add_annotator(cast.project, "ann"), "safe")

    page = cast.client_for("annotator").get(edit_url(cast, theirs), follow=True)
    api = token_client(cast.annotator).put(
        api_url(cast, theirs), {"verdict": "unsure", "version": 1}, content_type="application/json"
    )

    assert "That label is not yours" in page.content.decode()
    assert api.status_code == 404
    theirs.refresh_from_db()
    assert theirs.verdict == "safe"
