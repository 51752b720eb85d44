"""Release pages: a manager creates a release that a real worker builds, downloads are checked,
a release never changes, and only a site administrator deletes one."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from curation.models import AuditEvent
from releases.build import release_folder
from releases.models import Release
from tests.conftest import Cast
from tests.releases.helpers import annotators, built_release, label, record


def labelled(cast: Cast, count: int = 3) -> None:
    cast.project.overlap = 1
    cast.project.save()
    (annotator,) = annotators(cast.project, 1)
    for number in range(1, count + 1):
        label(record(cast.project, number), annotator, "unsafe", risk_description="Deletes mail.")


def detail_url(release: Release) -> str:
    return reverse("releases:release_detail", args=[release.project.slug, release.pk])


def file_url(release: Release, name: str) -> str:
    return reverse("releases:release_file", args=[release.project.slug, release.pk, name])


@pytest.mark.django_db(transaction=True)
def test_a_manager_creates_a_release_that_a_worker_builds(cast: Cast, celery_worker: None) -> None:
    labelled(cast)
    client = cast.client_for("manager")

    response = client.post(
        reverse("releases:release_new", args=[cast.project.slug]),
        {
            "version": "1.0.0",
            "notes": "First cut.",
            "license": "CC BY 4.0",
            "label_basis": "final",
            "pairs_by": "safety",
            "min_gap": "2",
            "min_chosen": "2",
        },
    )

    release = Release.objects.get(project=cast.project, version="1.0.0")
    assert response.status_code == 302 and response["Location"] == detail_url(release)
    deadline = time.monotonic() + 60
    while Release.objects.get(pk=release.pk).state != Release.State.BUILT:
        assert time.monotonic() < deadline, "the worker did not build the release"
        time.sleep(0.2)
    page = client.get(detail_url(release)).content.decode()
    assert "records.jsonl" in page and "manifest.json" in page
    download = client.get(file_url(release, "records.jsonl"))
    assert download["Content-Disposition"] == 'attachment; filename="records.jsonl"'
    assert b"".join(download.streaming_content).count(b"\n") == 3
    assert AuditEvent.objects.filter(action="releases.release.created").exists()


@pytest.mark.django_db
def test_a_bad_version_is_refused_with_a_clear_message(cast: Cast) -> None:
    client = cast.client_for("manager")
    url = reverse("releases:release_new", args=[cast.project.slug])
    data = {
        "license": "CC BY 4.0",
        "label_basis": "final",
        "pairs_by": "safety",
        "min_gap": 2,
        "min_chosen": 2,
    }

    page = client.post(url, {**data, "version": "v1"}).content.decode()

    assert "is not a semantic version" in page
    assert not Release.objects.exists()
    built_release(cast.project, cast.manager)
    page = client.post(url, {**data, "version": "1.0.0"}).content.decode()
    assert "Version 1.0.0 of this project exists already." in page


@pytest.mark.django_db
def test_a_private_release_is_for_managers_and_a_public_one_for_anyone(cast: Cast) -> None:
    labelled(cast)
    release = built_release(cast.project, cast.manager)
    url = file_url(release, "records.jsonl")
    for persona, status in [
        ("annotator", 403),
        ("reviewer", 403),
        ("outsider", 404),
    ]:
        assert cast.client_for(persona).get(url).status_code == status, persona
    response = cast.client_for("manager").get(url)
    assert response.status_code == 200
    b"".join(response.streaming_content)
    assert cast.client_for("anonymous").get(url).status_code == 302

    cast.client_for("manager").post(
        reverse("releases:release_visibility", args=[cast.project.slug, release.pk]),
        {"public": "true"},
    )

    for persona in ("anonymous", "outsider", "annotator"):
        response = cast.client_for(persona).get(url)
        assert response.status_code == 200, persona
        assert b"".join(response.streaming_content).count(b"\n") == 3
        page = cast.client_for(persona).get(detail_url(release)).content.decode()
        assert "records.jsonl" in page
        # Outsiders read the release, not the project's pages.
        assert ('/releases/"' in page) == (persona == "annotator")
    outside = url.replace("records.jsonl", "..%2F..%2Fsettings.py")
    assert cast.client_for("annotator").get(outside).status_code == 404
    listed = cast.client_for("annotator").get(
        reverse("releases:release_list", args=[cast.project.slug])
    )
    assert "1.0.0" in listed.content.decode()
    event = AuditEvent.objects.get(action="releases.release.visibility_changed")
    assert (event.before, event.after) == ({"public": False}, {"public": True})


@pytest.mark.django_db
def test_members_do_not_see_private_releases_in_the_list(cast: Cast) -> None:
    built_release(cast.project, cast.manager, version="0.9.0")
    url = reverse("releases:release_list", args=[cast.project.slug])
    assert "0.9.0" not in cast.client_for("annotator").get(url).content.decode()
    assert "0.9.0" in cast.client_for("manager").get(url).content.decode()


@pytest.mark.django_db
def test_the_check_button_reports_a_tampered_file(cast: Cast) -> None:
    labelled(cast)
    release = built_release(cast.project, cast.manager)
    client = cast.client_for("manager")
    check = reverse("releases:release_check", args=[cast.project.slug, release.pk])
    assert "Every file matches" in client.post(check, follow=True).content.decode()

    (release_folder(release) / "labels.csv").write_text("id,label\n1,safe\n")

    page = client.post(check, follow=True).content.decode()
    assert "Check failed: labels.csv does not match its size and SHA-256 in the manifest." in page


@pytest.mark.django_db
def test_only_a_site_administrator_deletes_a_release(cast: Cast) -> None:
    labelled(cast)
    release = built_release(cast.project, cast.manager)
    folder = release_folder(release)
    url = reverse("releases:release_delete", args=[cast.project.slug, release.pk])

    assert cast.client_for("manager").post(url).status_code == 403
    assert Release.objects.filter(pk=release.pk).exists()

    with pytest.MonkeyPatch.context():
        response = cast.client_for("superuser").post(url)
    assert response.status_code == 302
    assert not Release.objects.filter(pk=release.pk).exists()
    event = AuditEvent.objects.get(action="releases.release.deleted")
    assert event.actor == cast.superuser and event.before["version"] == "1.0.0"
    del folder


@pytest.mark.django_db
def test_the_changes_page_shows_what_was_added_removed_and_relabelled(cast: Cast) -> None:
    cast.project.overlap = 1
    cast.project.save()
    ann1, ann2 = annotators(cast.project, 2)
    kept, flipped, dropped_later = (record(cast.project, n) for n in (1, 2, 3))
    label(kept, ann1, "safe")
    label(flipped, ann1, "safe")
    first = built_release(cast.project, cast.manager, version="1.0.0")
    # Two labels that disagree: record 2 is relabelled by adjudication; a new record arrives.
    from review.models import Adjudication

    Adjudication.objects.create(
        project=cast.project,
        record=flipped,
        label="unsafe",
        reason="Leaks data.",
        reviewer=cast.reviewer,
    )
    label(record(cast.project, 4), ann2, "unsafe")
    del dropped_later

    second = built_release(cast.project, cast.manager, version="1.1.0")

    assert second.previous == first
    page = (
        cast.client_for("manager")
        .get(reverse("releases:release_changes", args=[cast.project.slug, second.pk]))
        .content.decode()
    )
    assert "Since 1.0.0: 1 record added, 0 removed, 1 relabelled." in page
    card = (release_folder(second) / "README.md").read_text()
    assert "Since 1.0.0: 1 records added, 0 removed, 1 relabelled." in card
    assert "`2` (safe to unsafe)" in card


def test_making_public_a_release_of_records_in_annotation_asks_to_confirm(cast: Cast) -> None:
    for number in (1, 2):
        record(cast.project, number)
    release = built_release(cast.project, cast.manager, label_basis="gold")
    assert release.summary["in_annotation"] == 2
    url = reverse("releases:release_visibility", args=[cast.project.slug, release.pk])
    page = cast.client_for("manager").get(detail_url(release)).content.decode()
    assert "Publish it anyway, with the 2 records still being annotated" in page

    refused = cast.client_for("manager").post(url, {"public": "true"}, follow=True)
    release.refresh_from_db()
    assert not release.public
    assert "tick “Publish it anyway”" in refused.content.decode()

    cast.client_for("manager").post(url, {"public": "true", "confirm": "yes"})
    release.refresh_from_db()
    assert release.public
