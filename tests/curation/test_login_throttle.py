"""Login throttling where the studio is deployed: behind a proxy only when it is declared, by
address as well as by username from an address, and a username slowed down, never locked."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client
from pytest_django.fixtures import Settings

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.2"


def through_proxy(client_address: str, forged: str = "") -> Client:
    """A browser at `client_address` behind one proxy that appends the address it saw to
    X-Forwarded-For (as nginx's $proxy_add_x_forwarded_for does), after whatever the browser
    sent."""
    forwarded = f"{forged}, {client_address}" if forged else client_address
    return Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded)


def log_in(client: Client, username: str, password: str = PASSWORD) -> int:
    return client.post("/login/", {"username": username, "password": password}).status_code


def logged_in(client: Client) -> bool:
    return client.get("/").status_code == 200


def guess_wrong(client: Client, username: str, times: int) -> None:
    for attempt in range(times):
        log_in(client, username, f"wrong {attempt}")


@pytest.fixture
def one_proxy(settings: Settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1


def test_behind_a_declared_proxy_guessing_from_one_address_does_not_lock_out_another(
    one_proxy: None,
) -> None:
    UserFactory(username="alice")
    alice = through_proxy("198.51.100.7")
    log_in(alice, "alice")
    alice.post("/logout/")
    guess_wrong(through_proxy("203.0.113.5"), "alice", 3 * settings.AXES_FAILURE_LIMIT)

    log_in(alice, "alice")

    assert logged_in(alice)
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"203.0.113.5"}


def test_behind_a_declared_proxy_the_guesser_is_locked_out_whatever_it_forges(
    one_proxy: None,
) -> None:
    UserFactory(username="alice")
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        guesser = through_proxy("203.0.113.5", forged=f"192.0.2.{attempt}")
        log_in(guesser, "alice", f"wrong {attempt}")

    assert log_in(through_proxy("203.0.113.5", forged="192.0.2.99"), "alice") == 429


def test_behind_a_declared_proxy_on_a_unix_socket_the_client_is_the_one_it_forwarded_for(
    one_proxy: None,
) -> None:
    log_in(Client(REMOTE_ADDR="", HTTP_X_FORWARDED_FOR="192.0.2.1, 203.0.113.5"), "alice", "x")

    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"203.0.113.5"}


def test_without_a_declared_proxy_x_forwarded_for_is_not_believed() -> None:
    UserFactory(username="alice")
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        forger = Client(HTTP_X_FORWARDED_FOR=f"192.0.2.{attempt}")
        log_in(forger, "alice", f"wrong {attempt}")

    assert log_in(Client(HTTP_X_FORWARDED_FOR="192.0.2.99"), "alice") == 429
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"127.0.0.1"}


def test_a_proxy_named_by_its_address_is_believed_and_no_other_connection(
    settings: Settings,
) -> None:
    settings.TRUSTED_PROXY_ADDRESSES = ["10.0.0.0/24"]
    UserFactory(username="alice")
    log_in(through_proxy("203.0.113.5"), "alice", "wrong")
    log_in(Client(REMOTE_ADDR="198.51.100.9", HTTP_X_FORWARDED_FOR="192.0.2.1"), "alice", "x")

    counted = set(AccessAttempt.objects.values_list("ip_address", flat=True))

    assert counted == {"203.0.113.5", "198.51.100.9"}


def test_an_ipv6_client_counts_as_its_whole_slash_64() -> None:
    UserFactory(username="alice")
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        log_in(Client(REMOTE_ADDR=f"2001:db8:1:2::{attempt + 1:x}"), "alice", f"wrong {attempt}")

    assert log_in(Client(REMOTE_ADDR="2001:db8:1:2:ffff::1"), "alice") == 429
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"2001:db8:1:2::"}


def test_a_password_sprayed_over_many_usernames_locks_the_address_out() -> None:
    UserFactory(username="alice")
    sprayer = Client(REMOTE_ADDR="203.0.113.5")
    usernames = [f"user{n}" for n in range(settings.LOGIN_ADDRESS_FAILURE_LIMIT)]
    for username in usernames:
        assert log_in(sprayer, username, "Summer2026!") == 200

    response = sprayer.post("/login/", {"username": "alice", "password": PASSWORD})

    assert response.status_code == 429
    assert "Too many wrong passwords" in response.text
    assert int(response["Retry-After"]) > 14 * 60
    assert not logged_in(sprayer)
    assert log_in(Client(REMOTE_ADDR="198.51.100.7"), "alice") == 302


def test_guesses_from_many_addresses_slow_a_username_down_without_locking_it() -> None:
    UserFactory(username="alice")
    at_work = Client(REMOTE_ADDR="198.51.100.7")
    log_in(at_work, "alice")
    at_work.post("/logout/")
    for attempt in range(settings.AXES_FAILURE_LIMIT + 3):
        log_in(Client(REMOTE_ADDR=f"203.0.113.{attempt}"), "alice", f"wrong {attempt}")

    elsewhere = Client(REMOTE_ADDR="192.0.2.50")
    refused = elsewhere.post("/login/", {"username": "alice", "password": PASSWORD})
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 2**3
    assert log_in(Client(REMOTE_ADDR="192.0.2.51"), "alice", "another guess") == 429

    # Where alice logged in before, she is not slowed down.
    log_in(at_work, "alice")
    assert logged_in(at_work)
    # Elsewhere, once the delay has passed; the refused attempts did not lengthen it.
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.latest("attempt_time").attempt_time
        - timedelta(seconds=2**3)
    )
    log_in(elsewhere, "alice")
    assert logged_in(elsewhere)


def test_a_usernames_delay_stops_growing_at_its_longest(settings: Settings) -> None:
    settings.LOGIN_USERNAME_DELAY_MAX_SECONDS = 30
    for attempt in range(settings.AXES_FAILURE_LIMIT + 20):
        AccessAttempt.objects.create(
            username="alice",
            ip_address=f"203.0.113.{attempt}",
            user_agent="guesser",
            failures_since_start=1,
            get_data="",
            post_data="",
            http_accept="",
            path_info="/login/",
        )

    refused = Client(REMOTE_ADDR="192.0.2.50").post(
        "/login/", {"username": "alice", "password": PASSWORD}
    )

    assert refused.status_code == 429
    assert 29 <= int(refused["Retry-After"]) <= 30


def change_password(client: Client, old: str):
    new = "a quite different passphrase"
    return client.post(
        "/account/password/", {"old_password": old, "new_password1": new, "new_password2": new}
    )


def test_the_password_change_pages_old_password_is_throttled_as_a_login_is() -> None:
    user = UserFactory(username="alice")
    client = Client()
    client.force_login(user)
    for attempt in range(settings.AXES_FAILURE_LIMIT - 1):
        assert change_password(client, f"wrong {attempt}").status_code == 200

    assert change_password(client, "wrong again").status_code == 429
    refused = change_password(client, PASSWORD)

    assert refused.status_code == 429
    assert "Too many wrong passwords" in refused.text
    user.refresh_from_db()
    assert user.check_password(PASSWORD)
    assert log_in(Client(), "alice") == 429, "the same count as the login page's"
