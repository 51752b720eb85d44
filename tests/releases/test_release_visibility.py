"""Making a release public or private: only a true boolean publishes it, in the API and on the
page; anything that is not a boolean is refused and the release stays as it was."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from curation.models import AuditEvent
from releases.models import Release
from tests.conftest import Cast
from tests.releases.helpers import built_release

pytestmark = pytest.mark.django_db


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def detail_url(release: Release) -> str:
    return reverse("releases_api:release_detail", args=[release.project.slug, release.pk])


def anyone_downloads(release: Release) -> bool:
    """Whether an anonymous caller may download the release's dataset card."""
    url = reverse("releases_api:release_file", args=[release.project.slug, release.pk, "README.md"])
    response = api().get(url)
    if response.status_code != 200:
        assert response.status_code in (401, 403)
        return False
    assert b"".join(response.streaming_content).startswith(b"---\nlicense:")
    return True


def is_public(release: Release) -> bool:
    return Release.objects.get(pk=release.pk).public


@pytest.mark.parametrize("false", [False, "false", "False", 0, "0", "no", "off"])
def test_false_in_any_spelling_keeps_a_release_private(cast: Cast, false: object) -> None:
    release = built_release(cast.project, cast.manager)

    response = api(cast.manager).patch(detail_url(release), {"public": false}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["public"] is False
    assert not is_public(release)
    assert not anyone_downloads(release)


@pytest.mark.parametrize("encoding", ["multipart", "urlencoded"])
def test_the_form_value_false_keeps_a_release_private(cast: Cast, encoding: str) -> None:
    release = built_release(cast.project, cast.manager)
    client = api(cast.manager)

    if encoding == "multipart":
        response = client.patch(detail_url(release), {"public": "false"}, format="multipart")
    else:
        response = client.patch(
            detail_url(release), "public=false", content_type="application/x-www-form-urlencoded"
        )

    assert response.status_code == 200, response.json()
    assert not is_public(release)
    assert not anyone_downloads(release)


def test_false_makes_a_public_release_private_again(cast: Cast) -> None:
    release = built_release(cast.project, cast.manager, public=True)
    assert anyone_downloads(release)

    response = api(cast.manager).patch(detail_url(release), {"public": "false"}, format="json")

    assert response.status_code == 200
    assert not is_public(release)
    assert not anyone_downloads(release)
    event = AuditEvent.objects.get(action="releases.release.visibility_changed")
    assert (event.before, event.after) == ({"public": True}, {"public": False})


@pytest.mark.parametrize("garbage", ["maybe", "", None, 2, [], {"value": True}, "true please"])
def test_a_value_that_is_not_a_boolean_is_refused(cast: Cast, garbage: object) -> None:
    release = built_release(cast.project, cast.manager)

    response = api(cast.manager).patch(detail_url(release), {"public": garbage}, format="json")

    assert response.status_code == 400
    assert "public" in response.json()
    assert not is_public(release)
    assert not AuditEvent.objects.filter(action="releases.release.visibility_changed").exists()


def test_true_publishes_and_fields_read_may_be_sent_back_unchanged(cast: Cast) -> None:
    release = built_release(cast.project, cast.manager)
    read = api(cast.manager).get(detail_url(release)).json()

    response = api(cast.manager).patch(
        detail_url(release), {**read, "public": "true"}, format="json"
    )

    assert response.status_code == 200, response.json()
    assert is_public(release)
    assert anyone_downloads(release)


def test_a_field_a_release_does_not_have_is_refused(cast: Cast) -> None:
    release = built_release(cast.project, cast.manager)

    response = api(cast.manager).patch(
        detail_url(release), {"public": True, "owner": "me"}, format="json"
    )

    assert response.status_code == 400
    assert "owner" in response.json()
    assert not is_public(release)


def test_the_page_makes_a_release_private_with_false_and_refuses_anything_else(
    cast: Cast,
) -> None:
    release = built_release(cast.project, cast.manager, public=True)
    url = reverse("releases:release_visibility", args=[cast.project.slug, release.pk])
    client = cast.client_for("manager")

    assert client.post(url, {"public": "maybe"}).status_code == 400
    assert is_public(release)

    response = client.post(url, {"public": "false"})

    assert response.status_code == 302
    assert not is_public(release)
    assert client.post(url, {}).status_code == 400
    assert not is_public(release)
    page = client.get(response["Location"]).content.decode()
    assert "Private: only managers may download it" in page
