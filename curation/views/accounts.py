"""Logging in and the user's own account."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def locked_out(
    request: HttpRequest, response: HttpResponse | None, credentials: Any
) -> HttpResponse:
    """What django-axes answers a locked-out login with, on the login page and the admin's.

    Failures are counted for any username, existing or not, and this page names none, so that
    it tells nobody which usernames exist.
    """
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return render(request, "registration/locked_out.html", {"minutes": minutes}, status=429)
