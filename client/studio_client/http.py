"""The HTTP side: the token, the timeout, errors as exceptions, pages followed, and retries of
reads only.

A read (GET) that gets no answer, or a 502/503/504 from a proxy in front of the studio, is
tried again a few times: reading twice changes nothing. Nothing else is ever tried again: an
upload, a run started or a label submitted whose answer was lost may well have happened, and
sending it again would import the file twice or start a second run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from studio_client.errors import StudioUnreachable, error_for

Params = Mapping[str, str | int | bool | None]

RETRIED_STATUSES = frozenset({502, 503, 504})


class Http:
    """One studio's API, called with a token."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float,
        read_retries: int,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not token:
            raise ValueError("An API token is needed: make one on your account page.")
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.read_retries = read_retries
        self.client = httpx.Client(
            base_url=self.base_url,
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
            timeout=timeout,
            transport=transport,
            # A redirect elsewhere would carry the token to it.
            follow_redirects=False,
        )

    def close(self) -> None:
        self.client.close()

    def get(self, path: str, params: Params | None = None) -> Any:
        return self._send_read(path, params).json()

    def send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A call that changes something: sent once, whatever happens."""
        try:
            response = self.client.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise StudioUnreachable(f"{method} {path}: {error!r}") from error
        if response.is_error:
            raise error_for(response)
        return response

    def pages(self, path: str, params: Params | None = None) -> Iterator[Any]:
        """Every item of a paginated list, page after page as they are read."""
        page = self.get(path, params)
        while True:
            yield from page["results"]
            if not page.get("next"):
                return
            page = self.get(self._same_origin(page["next"]))

    def stream_read(self, path: str) -> httpx.Response:
        """An open response to a read, for its body to be streamed (close it)."""
        return self._send_read(path, None, stream=True)

    def _send_read(
        self, path: str, params: Params | None, *, stream: bool = False
    ) -> httpx.Response:
        query = {name: value for name, value in (params or {}).items() if value is not None}
        # No params rather than empty ones: httpx replaces a URL's query (a next page's) with
        # the params given, even none.
        request = self.client.build_request("GET", path, params=query or None)
        for attempt in range(self.read_retries + 1):
            last = attempt == self.read_retries
            try:
                response = self.client.send(request, stream=stream)
            except httpx.TransportError as error:
                if last:
                    raise StudioUnreachable(f"GET {request.url}: {error!r}") from error
            else:
                if response.status_code not in RETRIED_STATUSES or last:
                    if response.is_error:
                        response.read()
                        response.close()
                        raise error_for(response)
                    return response
                response.close()
            time.sleep(0.5 * 2**attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _same_origin(self, url: str) -> str:
        """A page's `next` address, on the studio this client was given: the studio writes it
        with the host it was asked by, which behind a proxy may not be the one to call (and
        the token goes nowhere else)."""
        parts = urlsplit(url)
        base = urlsplit(self.base_url)
        return f"{base.scheme}://{base.netloc}{parts.path}" + (
            f"?{parts.query}" if parts.query else ""
        )


def path_of(*segments: str | int) -> str:
    """An API path from its segments, each quoted (a slug or a file name is never a path)."""
    return "api/" + "".join(f"{quote(str(segment), safe='')}/" for segment in segments)
