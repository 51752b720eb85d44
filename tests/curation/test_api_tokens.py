"""API tokens: named, made on the account page and shown once, stored hashed, expiring,
listed and revoked."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from curation.models import ApiToken, AuditEvent
from tests.conftest import Cast
from tests.curation.api_clients import api_key
from tests.factories import UserFactory

PROJECTS = reverse("api:project_list")


def api(key: str):
    return Client(headers={"Authorization": f"Token {key}"}).get(PROJECTS)


def make_token(client: Client, name: str = "import script", days: int = 30) -> str:
    """The key the account page shows once, read from the page."""
    page = client.post("/account/", {"name": name, "lifetime_days": days}).text
    return page.split('<code class="token">')[1].split("</code>")[0]


def test_a_token_made_on_the_account_page_opens_the_api_and_is_shown_once(cast: Cast) -> None:
    client = cast.client_for("reviewer")

    key = make_token(client)

    assert api(key).status_code == 200
    later = client.get("/account/").text
    assert key not in later
    assert "import script" in later and f"{key[:8]}…" in later
    assert AuditEvent.objects.filter(action="curation.api_token.created").count() == 1


def test_only_a_hash_of_the_key_is_stored(cast: Cast) -> None:
    key = make_token(cast.client_for("reviewer"))

    token = ApiToken.objects.get()
    assert key not in {token.key_hash, token.name}
    assert token.prefix == key[:8] and len(key) >= 40


def test_a_token_expires_after_the_lifetime_asked(cast: Cast) -> None:
    key = make_token(cast.client_for("reviewer"), days=7)
    token = ApiToken.objects.get()
    assert abs(token.expires_at - timezone.now() - timedelta(days=7)) < timedelta(minutes=1)

    ApiToken.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = api(key)

    assert response.status_code == 401
    assert response.json() == {"detail": "Token expired."}
    assert "expired" in cast.client_for("reviewer").get("/account/").text


def test_no_token_lives_longer_than_the_setting(cast: Cast, settings) -> None:
    settings.API_TOKEN_LIFETIME_DAYS = 10
    client = cast.client_for("reviewer")

    refused = client.post("/account/", {"name": "forever", "lifetime_days": 11})
    make_token(client, days=10)

    assert "less than or equal to 10" in refused.text
    assert ApiToken.objects.get().expires_at < timezone.now() + timedelta(days=10, minutes=1)


def test_a_revoked_token_no_longer_opens_the_api(cast: Cast) -> None:
    client = cast.client_for("reviewer")
    key, kept = make_token(client, "old"), make_token(client, "kept")

    response = client.post(
        "/account/tokens/revoke/", {"token": ApiToken.objects.get(name="old").pk}, follow=True
    )

    assert "Token “old” revoked" in response.text
    assert api(key).status_code == 401
    assert api(kept).status_code == 200
    assert AuditEvent.objects.filter(action="curation.api_token.revoked").count() == 1


def test_nobody_revokes_another_users_token(cast: Cast) -> None:
    key = api_key(cast.manager)

    response = cast.client_for("reviewer").post(
        "/account/tokens/revoke/", {"token": ApiToken.objects.get().pk}, follow=True
    )

    assert "You have no such token." in response.text
    assert api(key).status_code == 200


def test_the_account_page_lists_only_the_users_own_tokens(cast: Cast) -> None:
    api_key(cast.manager)

    page = cast.client_for("reviewer").get("/account/").text

    assert "You have no API token." in page


def test_a_token_of_a_deactivated_user_is_refused(cast: Cast) -> None:
    key = api_key(cast.reviewer)
    cast.reviewer.is_active = False
    cast.reviewer.save()

    assert api(key).status_code == 401


def test_the_last_use_is_recorded_once_a_minute_at_most(cast: Cast) -> None:
    key = api_key(cast.reviewer)

    api(key)
    first = ApiToken.objects.get().last_used_at
    api(key)

    assert first is not None and ApiToken.objects.get().last_used_at == first
    ApiToken.objects.update(last_used_at=first - timedelta(minutes=2))
    api(key)
    assert ApiToken.objects.get().last_used_at > first


@pytest.mark.django_db(transaction=True)
def test_tokens_made_before_they_were_hashed_keep_working_and_leave_no_key_in_clear() -> None:
    user = UserFactory()
    key = "0123456789abcdef0123456789abcdef01234567"
    executor = MigrationExecutor(connection)
    executor.migrate([("curation", "0006_annotation_and_authoring_apart")])
    try:
        with connection.cursor() as cursor:
            # DRF's table as its app made it, with one token in clear.
            cursor.execute(
                "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, "
                "created timestamp with time zone NOT NULL, user_id integer NOT NULL UNIQUE)"
            )
            cursor.execute("INSERT INTO authtoken_token VALUES (%s, now(), %s)", [key, user.pk])
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

        assert api(key).status_code == 200
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM authtoken_token")
            assert cursor.fetchone() == (0,)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS authtoken_token")
