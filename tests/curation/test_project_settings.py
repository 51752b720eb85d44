"""A project's settings: its managers change its name, description and license on a page and
through the API, the slug staying; the page leads to every other setting of the project."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation.models import AuditEvent, Project
from tests.conftest import Cast
from tests.curation.api_clients import token_client

NEW_SETTINGS = {
    "name": "Agent Safety, second round",
    "description": "Agents acting on mail and files.",
    "license": "CC-BY-4.0",
}


def settings_url(cast: Cast) -> str:
    return reverse("curation:project_settings", args=[cast.project.slug])


def api_url(cast: Cast) -> str:
    return reverse("api:project_detail", args=[cast.project.slug])


def test_a_manager_changes_the_name_description_and_license_on_the_page(cast: Cast) -> None:
    response = cast.client_for("manager").post(settings_url(cast), NEW_SETTINGS, follow=True)

    project = Project.objects.get(pk=cast.project.pk)
    assert (project.name, project.description, project.license) == tuple(NEW_SETTINGS.values())
    assert project.slug == "agent-safety"
    assert "Project settings saved." in response.content.decode()
    event = AuditEvent.objects.get(action="curation.project.changed")
    assert event.actor == cast.manager
    assert event.before == {"name": "Agent Safety", "description": "", "license": ""}
    assert event.after == NEW_SETTINGS


def test_saving_unchanged_settings_writes_no_audit_event(cast: Cast) -> None:
    unchanged = {"name": "Agent Safety", "description": "", "license": ""}

    cast.client_for("manager").post(settings_url(cast), unchanged)

    assert not AuditEvent.objects.filter(action="curation.project.changed").exists()


def test_an_empty_name_is_refused_and_the_page_keeps_the_stored_one(cast: Cast) -> None:
    response = cast.client_for("manager").post(settings_url(cast), {**NEW_SETTINGS, "name": ""})

    page = response.content.decode()
    assert response.status_code == 200
    assert "This field is required." in page
    assert "<title>Settings · Agent Safety · Curation Studio</title>" in page
    assert Project.objects.get(pk=cast.project.pk).name == "Agent Safety"


def test_the_page_links_every_other_setting_of_the_project(cast: Cast) -> None:
    page = cast.client_for("manager").get(settings_url(cast)).content.decode()

    slug = cast.project.slug
    for route in (
        "curation:members",
        "annotation:annotation_settings",
        "authoring:task_settings",
        "judging:judge_list",
        "curation:import_list",
        "releases:release_list",
    ):
        assert f'href="{reverse(route, args=[slug])}"' in page


def test_the_overview_links_the_settings_for_managers_only(cast: Cast) -> None:
    overview = reverse("curation:project", args=[cast.project.slug])
    link = f'href="{settings_url(cast)}"'

    assert link in cast.client_for("manager").get(overview).content.decode()
    assert link not in cast.client_for("reviewer").get(overview).content.decode()


@pytest.mark.parametrize("persona", ["annotator", "reviewer"])
def test_other_members_may_not_change_the_settings(cast: Cast, persona: str) -> None:
    page = cast.client_for(persona).post(settings_url(cast), NEW_SETTINGS)
    api = token_client(getattr(cast, persona)).patch(
        api_url(cast), NEW_SETTINGS, content_type="application/json"
    )

    assert (page.status_code, api.status_code) == (403, 403)
    assert Project.objects.get(pk=cast.project.pk).name == "Agent Safety"


def test_a_manager_changes_the_settings_through_the_api(cast: Cast) -> None:
    response = token_client(cast.manager).patch(
        api_url(cast), {"license": "MIT"}, content_type="application/json"
    )

    assert response.status_code == 200
    assert response.json()["license"] == "MIT"
    assert response.json()["name"] == "Agent Safety"
    assert response.json()["roles"] == ["manager"]
    event = AuditEvent.objects.get(action="curation.project.changed")
    assert (event.before, event.after) == ({"license": ""}, {"license": "MIT"})


def test_the_api_refuses_an_empty_name_and_never_changes_the_slug(cast: Cast) -> None:
    client = token_client(cast.manager)

    empty = client.patch(api_url(cast), {"name": ""}, content_type="application/json")
    slug = client.patch(api_url(cast), {"slug": "renamed"}, content_type="application/json")

    assert empty.status_code == 400
    assert "name" in empty.json()
    assert slug.status_code == 200
    assert Project.objects.get(pk=cast.project.pk).slug == "agent-safety"
    put = client.put(api_url(cast), NEW_SETTINGS, content_type="application/json")
    assert put.status_code == 405
