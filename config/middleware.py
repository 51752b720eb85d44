"""Middleware of the studio's own."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase
from django.utils.cache import patch_cache_control


class PrivateAnswersMiddleware:
    """Keep answers to signed-in people, and every answer of the API, out of caches.

    Pages and API answers carry labels, verdicts, gold labels and unpublished releases: a shared
    cache must not keep them for the next person, nor a browser keep them on disk after logout.
    One rule for every view rather than a decorator on each, so that a new view cannot forget
    it. API callers authenticate by token, which this middleware cannot see (DRF reads it in the
    view), hence the rule on the path. A view that sets its own Cache-Control keeps it; static
    files never reach this middleware (WhiteNoise answers them first) and stay cacheable.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if response.has_header("Cache-Control"):
            return response
        if request.user.is_authenticated or request.path_info.startswith("/api/"):
            patch_cache_control(response, no_store=True, private=True)
        return response
