"""A new project's slug is made from its name when it is left empty, on the page and in the
API: Django's slugify, with -2, -3 ... added when another project has it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from curation.models import Project
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import UserFactory

NEW_PROJECT = reverse("curation:project_new")
PROJECTS = reverse("api:project_list")


def create_on_the_page(cast: Cast, **fields: str):
    return cast.client_for("superuser").post(NEW_PROJECT, {"description": "", **fields})


def test_an_empty_slug_is_made_from_the_name(cast: Cast) -> None:
    response = create_on_the_page(cast, name="Shell Commands: rm -rf & Co.", slug="")

    assert response.status_code == 302
    assert response["Location"] == "/p/shell-commands-rm-rf-co/"
    assert (
        Project.objects.get(slug="shell-commands-rm-rf-co").name == "Shell Commands: rm -rf & Co."
    )


def test_a_name_another_project_has_gets_a_number(cast: Cast) -> None:
    for _ in range(2):
        assert create_on_the_page(cast, name="Agent Safety", slug="").status_code == 302

    assert set(Project.objects.filter(name="Agent Safety").values_list("slug", flat=True)) == {
        "agent-safety",
        "agent-safety-2",
        "agent-safety-3",
    }


def test_a_name_without_letters_makes_a_slug_all_the_same(cast: Cast) -> None:
    assert create_on_the_page(cast, name="???", slug="").status_code == 302

    assert Project.objects.filter(name="???", slug="project").exists()


def test_a_long_name_is_cut_to_the_slugs_length_with_its_number(cast: Cast) -> None:
    name = " ".join(["word"] * 40)
    for _ in range(2):
        create_on_the_page(cast, name=name, slug="")

    first, second = Project.objects.filter(name=name).order_by("pk").values_list("slug", flat=True)
    assert first == "-".join(["word"] * 16)
    assert second == "-".join(["word"] * 15) + "-wor-2"
    assert len(second) == 80


def test_a_chosen_slug_is_kept_and_refused_when_taken(cast: Cast) -> None:
    assert create_on_the_page(cast, name="Mine", slug="my-own").status_code == 302
    taken = create_on_the_page(cast, name="Agent Safety", slug="agent-safety")

    assert Project.objects.filter(name="Mine", slug="my-own").exists()
    assert taken.status_code == 200
    assert "Project with this Slug already exists." in taken.content.decode()


def test_a_slug_the_page_made_from_the_name_gets_a_number_when_taken(cast: Cast) -> None:
    response = create_on_the_page(
        cast, name="Agent Safety", slug="agent-safety", slug_from_name="True"
    )

    assert response.status_code == 302
    assert response["Location"] == "/p/agent-safety-2/"


def test_the_page_says_the_slug_may_be_left_empty_and_loads_its_script(cast: Cast) -> None:
    page = cast.client_for("superuser").get(NEW_PROJECT).content.decode()

    assert "Left empty, it is made from the name." in page
    assert 'src="/static/js/project_new.js' in page
    assert 'name="slug_from_name"' in page
    assert '<input type="text" name="slug"' in page
    assert 'name="slug" maxlength="80" required' not in page


def test_the_api_makes_the_slug_from_the_name(cast: Cast) -> None:
    client = token_client(cast.superuser)

    first = client.post(PROJECTS, {"name": "Agent Safety"}, content_type="application/json")
    second = client.post(
        PROJECTS, {"name": "Agent Safety", "slug": ""}, content_type="application/json"
    )

    assert first.status_code == 201
    assert first.json()["slug"] == "agent-safety-2"
    assert first.json()["roles"] == ["manager"]
    assert first["Location"] == "/api/projects/agent-safety-2/"
    assert second.json()["slug"] == "agent-safety-3"


def test_the_api_keeps_a_chosen_slug_and_refuses_a_taken_one(cast: Cast) -> None:
    client = token_client(cast.superuser)

    chosen = client.post(PROJECTS, {"name": "X", "slug": "my-own"}, content_type="application/json")
    taken = client.post(
        PROJECTS, {"name": "X", "slug": "agent-safety"}, content_type="application/json"
    )
    invalid = client.post(
        PROJECTS, {"name": "X", "slug": "no spaces"}, content_type="application/json"
    )

    assert chosen.status_code == 201
    assert chosen.json()["slug"] == "my-own"
    assert taken.status_code == 400
    assert "slug" in taken.json()
    assert invalid.status_code == 400
    assert Project.objects.filter(name="X").count() == 1


@pytest.mark.parametrize("persona", ["outsider", "annotator", "reviewer", "manager"])
def test_the_api_lets_only_those_allowed_create_projects(cast: Cast, persona: str) -> None:
    refused = token_client(getattr(cast, persona)).post(
        PROJECTS, {"name": "Theirs"}, content_type="application/json"
    )
    anonymous = Client().post(PROJECTS, {"name": "Theirs"}, content_type="application/json")
    allowed = UserFactory(username="allowed")
    allowed.user_permissions.add(
        Permission.objects.get(content_type__app_label="curation", codename="add_project")
    )
    created = token_client(allowed).post(
        PROJECTS, {"name": "Theirs"}, content_type="application/json"
    )

    assert refused.status_code == 403
    assert anonymous.status_code in (401, 403)
    assert created.status_code == 201
    assert Project.objects.filter(name="Theirs").count() == 1
