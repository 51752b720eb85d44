"""Guessing passwords: after too many failures a username is locked out from that address."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def guess_wrong(client: Client, url: str, username: str) -> None:
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        client.post(url, {"username": username, "password": f"wrong {attempt}"})


def logged_in(client: Client) -> bool:
    return client.get("/").status_code == 200


@pytest.mark.parametrize("url", ["/login/", "/admin/login/"])
def test_the_right_password_is_refused_after_too_many_wrong_ones(url: str) -> None:
    UserFactory(username="alice", is_staff=True)
    client = Client()
    guess_wrong(client, url, "alice")

    response = client.post(url, {"username": "alice", "password": PASSWORD})

    assert response.status_code == 429
    assert "Too many failed logins" in response.text
    assert not logged_in(client)


def test_one_wrong_password_less_than_the_limit_still_lets_the_right_one_in() -> None:
    UserFactory(username="alice")
    client = Client()
    for attempt in range(settings.AXES_FAILURE_LIMIT - 1):
        response = client.post("/login/", {"username": "alice", "password": f"wrong {attempt}"})
        assert response.status_code == 200

    client.post("/login/", {"username": "alice", "password": PASSWORD})

    assert logged_in(client)


def test_the_lock_out_reads_the_same_whether_or_not_the_username_exists() -> None:
    UserFactory(username="alice")
    answers = []
    for username in ("alice", "nobody-here"):
        client = Client()
        guess_wrong(client, "/login/", username)
        response = client.post("/login/", {"username": username, "password": "another"})
        main = response.text.split('<main id="main">')[1]
        answers.append((response.status_code, main))
        assert username not in response.text

    assert answers[0] == answers[1]


def test_other_usernames_and_other_addresses_are_not_locked_out() -> None:
    UserFactory(username="alice")
    UserFactory(username="bob")
    alice_elsewhere = Client(REMOTE_ADDR="192.0.2.7")
    alice_elsewhere.post("/login/", {"username": "alice", "password": PASSWORD})
    alice_elsewhere.post("/logout/")
    guess_wrong(Client(), "/login/", "alice")

    bob = Client()
    bob.post("/login/", {"username": "bob", "password": PASSWORD})
    alice_elsewhere.post("/login/", {"username": "alice", "password": PASSWORD})

    assert logged_in(bob)
    assert logged_in(alice_elsewhere)


def test_the_right_password_works_again_after_the_cool_off() -> None:
    UserFactory(username="alice")
    client = Client()
    guess_wrong(client, "/login/", "alice")
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time
        - settings.AXES_COOLOFF_TIME
        - timedelta(seconds=1)
    )

    client.post("/login/", {"username": "alice", "password": PASSWORD})

    assert logged_in(client)
