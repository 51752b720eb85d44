"""Error pages in development show the traceback, never the environment or the settings.

A developer's `DEBUG=true ./studio up` shows Django's error page, which would list the settings
and request.META (under runserver, a copy of the process environment): DATABASE_URL and the
broker's URL with their passwords among them.
"""

from __future__ import annotations

import os
import secrets

import pytest
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path

# Made at run time: the page shows this file's lines around the view that raises.
ENVIRONMENT_PASSWORD = secrets.token_urlsafe(16)
SETTING_PASSWORD = secrets.token_urlsafe(16)


@login_not_required
def broken(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("The view broke on purpose.")


urlpatterns = [path("broken/", broken)]

pytestmark = pytest.mark.urls(__name__)


@pytest.fixture
def error_page(settings, monkeypatch) -> str:
    settings.DEBUG = True
    settings.CELERY_BROKER_URL = f"redis://:{SETTING_PASSWORD}@redis.example.org:6379/0"
    monkeypatch.setenv("DATABASE_URL", f"postgres://studio:{ENVIRONMENT_PASSWORD}@db/studio")
    client = Client(raise_request_exception=False)

    # runserver's request.META holds the environment; the test client's does not by itself.
    response = client.get("/broken/", **os.environ, HTTP_USER_AGENT="error-page-test-agent")

    assert response.status_code == 500
    return response.content.decode()


def test_an_error_page_in_development_shows_the_traceback_and_the_request_headers(
    error_page: str,
) -> None:
    assert "Traceback" in error_page
    assert "The view broke on purpose." in error_page
    assert "error-page-test-agent" in error_page


def test_an_error_page_shows_no_environment_variable(error_page: str) -> None:
    assert ENVIRONMENT_PASSWORD not in error_page
    assert "DATABASE_URL" not in error_page


def test_an_error_page_shows_no_setting(error_page: str) -> None:
    assert SETTING_PASSWORD not in error_page
    assert "CELERY_BROKER_URL" not in error_page
