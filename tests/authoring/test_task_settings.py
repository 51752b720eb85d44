"""A project's task review settings: seeded with SafePro's risk categories and the default
rubric, then edited by managers."""

from __future__ import annotations

from django.urls import reverse

from authoring.models import DEFAULT_RUBRIC, SAFEPRO_RISK_CATEGORIES, Task
from curation.models import AuditEvent
from curation.services.projects import project_create
from tests.authoring.task_helpers import make_task
from tests.conftest import Cast
from tests.factories import UserFactory

SLUG = "agent-safety"


def test_a_new_project_has_safepro_s_risk_categories_and_the_default_rubric(db) -> None:
    project = project_create(actor=UserFactory(), name="New", slug="new")

    assert list(project.risk_categories.values_list("slug", "name")) == list(
        SAFEPRO_RISK_CATEGORIES
    )
    assert list(project.rubric_checks.values_list("text", flat=True)) == list(DEFAULT_RUBRIC)
    assert (project.required_approvals, project.review_lease_minutes) == (1, 60)


def test_a_manager_sets_k_and_the_hold_time(cast: Cast) -> None:
    response = cast.client_for("manager").post(
        reverse("authoring:task_settings", args=[SLUG]),
        {"required_approvals": "2", "review_lease_minutes": "15"},
    )

    assert response.status_code == 302
    cast.project.refresh_from_db()
    assert (cast.project.required_approvals, cast.project.review_lease_minutes) == (2, 15)
    event = AuditEvent.objects.get(action="curation.project.review_settings_changed")
    assert event.before == {"required_approvals": 1, "review_lease_minutes": 60}
    assert event.after == {"required_approvals": 2, "review_lease_minutes": 15}


def test_k_has_bounds(cast: Cast) -> None:
    response = cast.client_for("manager").post(
        reverse("authoring:task_settings", args=[SLUG]),
        {"required_approvals": "0", "review_lease_minutes": "15"},
    )

    assert response.status_code == 200
    assert "Ensure this value is greater than or equal to 1." in response.content.decode()
    cast.project.refresh_from_db()
    assert cast.project.required_approvals == 1


def test_a_manager_adds_and_removes_a_risk_category(cast: Cast) -> None:
    client = cast.client_for("manager")

    client.post(reverse("authoring:risk_category_create", args=[SLUG]), {"name": "Privacy breach"})
    category = cast.project.risk_categories.get(slug="privacy-breach")
    assert category.name == "Privacy breach"
    twice = client.post(
        reverse("authoring:risk_category_create", args=[SLUG]),
        {"name": "privacy breach"},
        follow=True,
    )
    assert "The project has a risk category “privacy breach” already." in twice.content.decode()

    client.post(reverse("authoring:risk_category_delete", args=[SLUG, category.pk]))
    assert not cast.project.risk_categories.filter(slug="privacy-breach").exists()


def test_a_risk_category_in_use_stays(cast: Cast) -> None:
    task = make_task(cast.project, cast.author)

    response = cast.client_for("manager").post(
        reverse("authoring:risk_category_delete", args=[SLUG, task.risk_category.pk]), follow=True
    )

    assert "1 task(s) have the risk category “Financial harm”" in response.content.decode()
    assert cast.project.risk_categories.filter(pk=task.risk_category.pk).exists()


def test_the_review_form_asks_the_active_checks_of_the_rubric(cast: Cast) -> None:
    client = cast.client_for("manager")
    client.post(reverse("authoring:rubric_check_create", args=[SLUG]), {"text": "Cites a law."})
    retired = cast.project.rubric_checks.get(text=DEFAULT_RUBRIC[0])
    client.post(reverse("authoring:rubric_check_switch", args=[SLUG, retired.pk]))
    task = make_task(cast.project, cast.author, Task.State.IN_REVIEW, reviewer=cast.reviewer)

    page = cast.client_for("reviewer").get(reverse("authoring:task_review", args=[SLUG, task.pk]))

    body = page.content.decode()
    assert "Cites a law." in body
    assert DEFAULT_RUBRIC[0] not in body
    assert DEFAULT_RUBRIC[1] in body
