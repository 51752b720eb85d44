"""Site administrators make accounts, let people create projects, and unlock locked-out logins
from the studio's own pages."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from curation.models import ApiToken, AuditEvent, Membership
from tests.conftest import Cast
from tests.curation.api_clients import api_key
from tests.factories import PASSWORD, UserFactory

NEW_PASSWORD = "a long and unusual passphrase"


def logs_in(username: str, password: str) -> bool:
    client = Client()
    client.post("/login/", {"username": username, "password": password})
    return client.get("/").status_code == 200


def test_an_administrator_creates_an_account_that_logs_in(cast: Cast) -> None:
    admin = cast.client_for("superuser")

    response = admin.post(
        "/users/",
        {"username": "newcomer", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
        follow=True,
    )

    assert "Account “newcomer” created." in response.text
    assert logs_in("newcomer", NEW_PASSWORD)
    assert AuditEvent.objects.filter(action="curation.user.created", actor=cast.superuser).exists()


@pytest.mark.parametrize(
    ("username", "password", "error"),
    [
        ("manager", NEW_PASSWORD, "A user with that username already exists."),
        ("newcomer", "password", "This password is too common."),
        ("MANAGER", NEW_PASSWORD, "A user with that username already exists."),
        ("\uff4danager", NEW_PASSWORD, "A user with that username already exists."),
        # Fullwidth m above, Cyrillic a and e here.
        (
            "m\u0430nag\u0435r",
            NEW_PASSWORD,
            "There is already an account “manager”, which reads as",
        ),
        ("rnanager", NEW_PASSWORD, "There is already an account “manager”, which reads as"),
    ],
)
def test_a_taken_username_or_a_weak_password_is_refused(cast: Cast, username, password, error):
    accounts = get_user_model().objects.count()

    response = cast.client_for("superuser").post(
        "/users/", {"username": username, "password1": password, "password2": password}
    )

    assert error in response.text
    assert get_user_model().objects.count() == accounts


def test_the_list_shows_every_account_and_who_may_create_projects(cast: Cast) -> None:
    page = cast.client_for("superuser").get("/users/").text

    for username in ("admin", "annotator", "manager", "outsider"):
        assert f">{username}</a>" in page


def allow_projects(admin: Client, user, allowed: bool) -> None:
    data = {"is_active": "on", **({"may_create_projects": "on"} if allowed else {})}
    admin.post(f"/users/{user.pk}/", data)


def test_a_manager_allowed_to_create_projects_creates_one_and_manages_it(cast: Cast) -> None:
    manager = cast.client_for("manager")
    assert manager.get("/projects/new/").status_code == 403
    assert "New project" not in manager.get("/").text

    allow_projects(cast.client_for("superuser"), cast.manager, True)
    response = manager.post("/projects/new/", {"name": "Second", "slug": "second"}, follow=True)

    assert response.status_code == 200
    assert "New project" in manager.get("/").text
    assert Membership.objects.filter(
        project__slug="second", user=cast.manager, role="manager"
    ).exists()
    event = AuditEvent.objects.get(action="curation.user.changed")
    assert event.after == {"is_active": True, "may_create_projects": True}


def test_taking_the_permission_back_stops_them(cast: Cast) -> None:
    admin = cast.client_for("superuser")
    allow_projects(admin, cast.manager, True)

    allow_projects(admin, cast.manager, False)

    assert cast.client_for("manager").get("/projects/new/").status_code == 403


def test_a_deactivated_account_no_longer_logs_in(cast: Cast) -> None:
    cast.client_for("superuser").post(f"/users/{cast.annotator.pk}/", {})

    assert not logs_in("annotator", PASSWORD)


def test_administrators_cannot_deactivate_themselves(cast: Cast) -> None:
    response = cast.client_for("superuser").post(f"/users/{cast.superuser.pk}/", {})

    assert response.status_code == 403
    cast.superuser.refresh_from_db()
    assert cast.superuser.is_active


@pytest.mark.django_db
def test_an_administrator_sees_a_lock_out_and_lifts_it() -> None:
    UserFactory(username="alice")
    admin = Client()
    admin.force_login(UserFactory(username="admin", is_superuser=True, is_staff=True))
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        Client().post("/login/", {"username": "alice", "password": f"wrong {attempt}"})
    assert not logs_in("alice", PASSWORD)
    alice = get_user_model().objects.get(username="alice")

    assert "locked out" in admin.get("/users/").text
    detail = admin.get(f"/users/{alice.pk}/").text
    assert "Locked out after too many wrong passwords" in detail and "127.0.0.1" in detail
    admin.post(f"/users/{alice.pk}/unlock/")

    assert logs_in("alice", PASSWORD)
    assert "Not locked out." in admin.get(f"/users/{alice.pk}/").text
    assert AuditEvent.objects.filter(action="curation.user.unlocked").exists()


def test_an_administrator_revokes_a_lost_token_of_someone_else(cast: Cast) -> None:
    key = api_key(cast.manager)
    token = ApiToken.objects.get()
    admin = cast.client_for("superuser")

    listed = admin.get(f"/users/{cast.manager.pk}/").text
    admin.post(f"/users/{cast.reviewer.pk}/tokens/revoke/", {"token": token.pk})
    still = Client(headers={"Authorization": f"Token {key}"}).get("/api/projects/")
    admin.post(f"/users/{cast.manager.pk}/tokens/revoke/", {"token": token.pk})
    revoked = Client(headers={"Authorization": f"Token {key}"}).get("/api/projects/")

    assert f"{key[:8]}…" in listed
    assert (still.status_code, revoked.status_code) == (200, 401)
    event = AuditEvent.objects.get(action="curation.api_token.revoked")
    assert event.actor == cast.superuser
