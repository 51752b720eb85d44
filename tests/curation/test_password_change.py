"""Every user changes their own password from the account page."""

from __future__ import annotations

import pytest
from django.test import Client

from curation.models import ApiToken, AuditEvent
from curation.services.accounts import api_token_create
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a quite different passphrase"


def logs_in(username: str, password: str) -> bool:
    client = Client()
    client.post("/login/", {"username": username, "password": password})
    return client.get("/").status_code == 200


def change(client: Client, old: str, new: str):
    return client.post(
        "/account/password/",
        {"old_password": old, "new_password1": new, "new_password2": new},
        follow=True,
    )


def test_the_account_page_leads_to_the_password_form() -> None:
    client = Client()
    client.force_login(UserFactory())

    assert 'href="/account/password/"' in client.get("/account/").text


def test_a_user_changes_their_password_and_logs_in_with_the_new_one() -> None:
    user = UserFactory(username="alice")
    client = Client()
    client.force_login(user)

    response = change(client, PASSWORD, NEW_PASSWORD)

    assert response.redirect_chain == [("/account/", 302)]
    assert "Your password is changed." in response.text
    assert client.get("/").status_code == 200, "the session that changed it goes on"
    assert logs_in("alice", NEW_PASSWORD)
    assert not logs_in("alice", PASSWORD)
    assert AuditEvent.objects.filter(action="curation.user.password_changed", actor=user).exists()


def test_a_wrong_old_password_changes_nothing() -> None:
    client = Client()
    client.force_login(UserFactory(username="alice"))

    response = change(client, "not my password", NEW_PASSWORD)

    assert "Your old password was entered incorrectly" in response.text
    assert logs_in("alice", PASSWORD)


def test_a_weak_new_password_is_refused() -> None:
    client = Client()
    client.force_login(UserFactory(username="alice"))

    response = change(client, PASSWORD, "password")

    assert "This password is too common." in response.text
    assert logs_in("alice", PASSWORD)


def test_other_sessions_of_the_user_end() -> None:
    user = UserFactory()
    elsewhere, here = Client(), Client()
    elsewhere.force_login(user)
    here.force_login(user)

    change(here, PASSWORD, NEW_PASSWORD)

    assert elsewhere.get("/").status_code == 302


def test_a_changed_password_revokes_the_users_api_tokens_and_says_so() -> None:
    user, other = UserFactory(), UserFactory()
    for owner in (user, user, other):
        api_token_create(user=owner, name="script")
    client = Client()
    client.force_login(user)

    response = change(client, PASSWORD, NEW_PASSWORD)

    assert "Your API tokens (2) are revoked" in response.text
    assert not ApiToken.objects.filter(user=user).exists()
    assert ApiToken.objects.filter(user=other).count() == 1
    assert AuditEvent.objects.filter(action="curation.api_token.revoked").count() == 2
