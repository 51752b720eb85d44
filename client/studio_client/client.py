"""The studio's REST API as methods: projects, records and imports (records.py), labels
(labels.py), judges and runs (runs.py), releases (releases.py).

Every method calls the routes of the API's OpenAPI schema (/api/schema/, shown at /api/docs/);
a list is followed page after page as it is iterated; an error answer raises the exception of
its kind (studio_client.errors).
"""

from __future__ import annotations

import os
from typing import Any, Self

import httpx

from studio_client.http import Http
from studio_client.labels import LabelsApi
from studio_client.records import RecordsApi
from studio_client.releases import ReleasesApi
from studio_client.runs import RunsApi

DEFAULT_TIMEOUT = 30.0


class StudioClient(RecordsApi, LabelsApi, RunsApi, ReleasesApi):
    """A session with one studio, as the owner of an API token.

        with StudioClient("https://studio.example.org/", token=os.environ["TOKEN"]) as studio:
            for project in studio.projects(): ...

    `timeout` is the seconds any one request may take (connecting, or waiting for the next
    bytes); `read_retries` how often a read that got no answer is tried again (changes never
    are). `transport` is httpx's, for a proxy or tests.
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        read_retries: int = 2,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.http = Http(
            url, token, timeout=timeout, read_retries=read_retries, transport=transport
        )

    @classmethod
    def from_env(cls, **options: Any) -> StudioClient:
        """A client of the studio at $STUDIO_URL with the token in $STUDIO_TOKEN."""
        return cls(os.environ["STUDIO_URL"], os.environ["STUDIO_TOKEN"], **options)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
