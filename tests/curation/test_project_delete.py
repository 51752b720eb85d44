"""Deleting a project: its managers and site administrators, typing its name to confirm. All
of it goes, whatever holds what; the site's connections stay; a project with a release built
is refused, naming it; the audit event keeps the project's name and what it held."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from annotation.services.guidelines import guidelines_publish
from annotation.services.labels import Label, annotation_submit
from annotation.services.queue import lease_next_record
from authoring.models import Task
from curation.models import AuditEvent, Project, Record
from judging.models import ModelConnection
from releases.models import Release
from tests.authoring.task_helpers import make_task
from tests.conftest import Cast
from tests.releases.helpers import built_release
from tests.test_access import url_values


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"


def delete_url(cast: Cast) -> str:
    return reverse("curation:project_delete", args=[cast.project.slug])


def a_full_project(cast: Cast) -> None:
    """Records labelled under guidelines, a judge with its runs, verdicts and evaluations, an
    approved task with its review, an import, and a release whose build failed."""
    guidelines_publish(project=cast.project, actor=cast.manager, text="Label with care.")
    url_values(cast)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    annotation_submit(lease=lease, actor=cast.annotator, label=Label("safe"))
    make_task(cast.project, cast.author, Task.State.APPROVED, reviewer=cast.reviewer)
    Release.objects.filter(project=cast.project).update(state=Release.State.FAILED)


def test_a_manager_deletes_the_project_with_everything_of_it(cast: Cast) -> None:
    a_full_project(cast)
    records = cast.project.records.count()

    response = cast.client_for("manager").post(
        delete_url(cast), {"name": "Agent Safety"}, follow=True
    )

    assert response.redirect_chain[-1][0] == reverse("home")
    assert "Project “Agent Safety” deleted" in response.content.decode()
    assert not Project.objects.filter(pk=cast.project.pk).exists()
    assert not Record.objects.exists()
    assert ModelConnection.objects.exists()
    event = AuditEvent.objects.get(action="curation.project.deleted")
    assert (event.actor, event.project, event.object_repr) == (cast.manager, None, "Agent Safety")
    assert event.before["name"] == "Agent Safety"
    assert event.before["records"] == records
    assert event.before["labels"] == 2


def test_the_settings_page_leads_to_the_deletion(cast: Cast) -> None:
    settings = reverse("curation:project_settings", args=[cast.project.slug])

    page = cast.client_for("manager").get(settings).content.decode()

    assert f'href="{delete_url(cast)}"' in page


def test_a_site_administrator_deletes_a_project_they_are_no_member_of(cast: Cast) -> None:
    cast.client_for("superuser").post(delete_url(cast), {"name": "Agent Safety"})

    assert not Project.objects.filter(pk=cast.project.pk).exists()


def test_a_wrong_name_deletes_nothing(cast: Cast) -> None:
    response = cast.client_for("manager").post(delete_url(cast), {"name": "agent safety"})

    assert "Type the project&#x27;s name exactly as it is" in response.content.decode()
    assert Project.objects.filter(pk=cast.project.pk).exists()


def test_a_project_with_a_built_release_is_refused_naming_it(cast: Cast) -> None:
    built_release(cast.project, cast.manager, version="1.2.0")

    response = cast.client_for("manager").post(delete_url(cast), {"name": "Agent Safety"})

    assert "1.2.0 (built)" in response.content.decode()
    assert Project.objects.filter(pk=cast.project.pk).exists()
    assert not AuditEvent.objects.filter(action="curation.project.deleted").exists()


@pytest.mark.parametrize("persona", ["annotator", "author", "reviewer"])
def test_other_members_may_not_delete_the_project(cast: Cast, persona: str) -> None:
    response = cast.client_for(persona).post(delete_url(cast), {"name": "Agent Safety"})

    assert response.status_code == 403
    assert Project.objects.filter(pk=cast.project.pk).exists()


def test_outsiders_do_not_learn_that_the_project_exists(cast: Cast) -> None:
    response = cast.client_for("outsider").post(delete_url(cast), {"name": "Agent Safety"})

    assert response.status_code == 404
    assert Project.objects.filter(pk=cast.project.pk).exists()
