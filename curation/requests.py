"""The request a view is given once its access check has passed.

Every page past `login_required` (or one of the project access decorators in `access.py`)
has a signed-in user, and the htmx middleware has said whether htmx sent the request. Django's
own `HttpRequest` types `user` as "a user or anonymous" and knows nothing of htmx, so a view
annotated with it would have to check again what its decorator already checked.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class AuthenticatedRequest(HttpRequest):
    """A request whose user signed in (never anonymous), as htmx's middleware left it."""

    user: User
    htmx: HtmxDetails
