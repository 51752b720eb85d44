"""The request a view is given once its access check has passed, and the user of an API request.

Every page past `login_required` (LoginRequiredMiddleware's default for every page but those
marked `login_not_required`, or one of the project access decorators in `access.py`) has a
signed-in user, and the htmx middleware has said whether htmx sent the request. Django's
own `HttpRequest` types `user` as "a user or anonymous" and knows nothing of htmx, so a view
annotated with it would have to check again what its decorator already checked.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails
from rest_framework.exceptions import NotAuthenticated
from rest_framework.request import Request


class AuthenticatedRequest(HttpRequest):
    """A request whose user signed in (never anonymous), as htmx's middleware left it."""

    user: User
    htmx: HtmxDetails


def api_user(request: Request) -> User:
    """The signed-in user an API request is made by.

    drf types `request.user` as "a user or anonymous" too. Every API view requires
    IsAuthenticated (settings.REST_FRAMEWORK's default), which answers 401 to the anonymous
    before the view runs; should a view ever drop it, it answers the same rather than act for
    nobody.
    """
    user = request.user
    if not user.is_authenticated:
        raise NotAuthenticated
    return user
