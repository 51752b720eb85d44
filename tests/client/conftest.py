"""The client against a live studio: Django's live server (real HTTP, in a thread of the suite)
on the suite's PostgreSQL database, with a real Celery worker taking the jobs the API starts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser

from studio_client import StudioClient
from tests.curation.api_clients import api_key

Connect = Callable[[AbstractBaseUser], StudioClient]


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> None:
    # Uploads and release files are stored: keep them out of the development media folder.
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def connect(live_server: Any) -> Iterator[Connect]:
    """A client of the live studio for a user, with an API token made on their account page."""
    clients: list[StudioClient] = []

    def connect(user: AbstractBaseUser) -> StudioClient:
        client = StudioClient(live_server.url, api_key(user), timeout=30)
        clients.append(client)
        return client

    yield connect
    for client in clients:
        client.close()
