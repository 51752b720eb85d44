"""The releases API: create, follow, download; a release never changes; admins alone delete."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from releases.models import Release
from releases.services import release_build
from tests.conftest import Cast
from tests.releases.helpers import annotators, built_release, label, record

pytestmark = pytest.mark.django_db


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def test_a_manager_creates_follows_and_downloads_a_release(cast: Cast) -> None:
    cast.project.overlap = 1
    cast.project.save()
    (annotator,) = annotators(cast.project, 1)
    label(record(cast.project, 1), annotator, "safe")
    url = reverse("releases_api:release_list", args=[cast.project.slug])

    response = api(cast.manager).post(
        url, {"version": "2.0.0-rc.1", "license": "MIT", "pairs_by": "helpfulness"}, format="json"
    )

    assert response.status_code == 202, response.json()
    body = response.json()
    assert (body["state"], body["files"], body["summary"]["records"]) == ("pending", [], 1)
    assert body["options"]["dpo"] == {"by": "helpfulness", "min_gap": 2.0, "min_chosen": 2.0}
    # The worker's job, run here.
    release_build(body["id"])
    detail = api(cast.manager).get(response["Location"]).json()
    assert detail["state"] == "built"
    files = {entry["name"]: entry for entry in detail["files"]}
    assert set(files) == {
        "README.md",
        "judge_dataset.jsonl",
        "judge_sft.jsonl",
        "judge_sft_openai.jsonl",
        "judge_task.py",
        "labels.csv",
        "manifest.json",
        "records.jsonl",
        "records.parquet",
        "rjudge.zip",
    }
    download = api(cast.manager).get(files["labels.csv"]["url"])
    assert download.status_code == 200
    assert b"".join(download.streaming_content).startswith(b"id,category,scenario")


def test_only_managers_create_and_the_version_must_be_semantic(cast: Cast) -> None:
    url = reverse("releases_api:release_list", args=[cast.project.slug])
    assert api(cast.reviewer).post(url, {"version": "1.0.0"}, format="json").status_code == 403
    response = api(cast.manager).post(url, {"version": "1.0"}, format="json")
    assert response.status_code == 400
    assert "not a semantic version" in response.json()["detail"]
    assert api(cast.manager).post(url, {"version": "1.0.0"}, format="json").status_code == 400
    assert (
        "license"
        in api(cast.manager).post(url, {"version": "1.0.0"}, format="json").json()["detail"]
    )


def test_a_release_never_changes_but_its_visibility(cast: Cast) -> None:
    release = built_release(cast.project, cast.manager)
    url = reverse("releases_api:release_detail", args=[cast.project.slug, release.pk])

    for change in (
        {"notes": "Rewritten."},
        {"version": "1.0.1"},
        {"label_basis": "gold"},
        {"state": "pending"},
    ):
        response = api(cast.manager).patch(url, change, format="json")
        assert response.status_code == 409, change
        assert "never changes" in response.json()["detail"]
    assert Release.objects.get(pk=release.pk).notes == ""

    response = api(cast.manager).patch(url, {"public": True}, format="json")
    assert response.status_code == 200 and response.json()["public"] is True
    assert api().get(url).status_code == 200


def test_private_releases_are_hidden_from_members_and_outsiders(cast: Cast) -> None:
    release = built_release(cast.project, cast.manager)
    detail = reverse("releases_api:release_detail", args=[cast.project.slug, release.pk])
    readme = reverse("releases_api:release_file", args=[cast.project.slug, release.pk, "README.md"])
    for url in (detail, readme):
        assert api(cast.annotator).get(url).status_code == 403
        assert api(cast.outsider).get(url).status_code == 404
        assert api().get(url).status_code in (401, 403)
    listed = api(cast.annotator).get(reverse("releases_api:release_list", args=[cast.project.slug]))
    assert listed.json()["results"] == []


def test_only_a_site_administrator_deletes(cast: Cast) -> None:
    release = built_release(cast.project, cast.manager)
    url = reverse("releases_api:release_detail", args=[cast.project.slug, release.pk])
    assert api(cast.manager).delete(url).status_code == 403
    assert api(cast.superuser).delete(url).status_code == 204
    assert not Release.objects.exists()
