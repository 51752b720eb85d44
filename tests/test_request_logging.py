"""The terminal of `./studio up` gets one line for a refused request, and the traceback of an
error: Django would log every PermissionDenied with its traceback."""

from __future__ import annotations

import logging

import pytest
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import include, path, reverse

from tests.conftest import Cast


@login_not_required
def broken(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("The view broke on purpose.")


urlpatterns = [path("broken/", broken), path("", include("config.urls"))]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


def logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == "django.request"]


def printed(record: logging.LogRecord) -> str:
    """The record as the terminal shows it: through the console handler's formatter."""
    return logging.Formatter(settings.LOGGING["formatters"]["plain"]["format"]).format(record)


def test_a_permission_refusal_is_one_line_with_method_path_status_and_user(
    cast: Cast, caplog: pytest.LogCaptureFixture
) -> None:
    url = reverse("hub:record_list", args=[cast.project.slug])

    response = cast.client_for("annotator").get(url, {"q": "door"})

    assert response.status_code == 403
    [record] = logged(caplog)
    assert record.getMessage() == f"GET {url} 403 user={cast.annotator.pk}"
    assert printed(record).endswith(
        f" WARNING django.request GET {url} 403 user={cast.annotator.pk}"
    )
    assert "\n" not in printed(record)


def test_a_project_hidden_from_an_outsider_is_one_line_too(
    cast: Cast, caplog: pytest.LogCaptureFixture
) -> None:
    url = reverse("curation:project", args=[cast.project.slug])

    response = cast.client_for("outsider").get(url)

    assert response.status_code == 404
    [record] = logged(caplog)
    assert record.getMessage() == f"GET {url} 404 user={cast.outsider.pk}"
    assert "\n" not in printed(record)


def test_an_anonymous_refusal_says_so(db: None, caplog: pytest.LogCaptureFixture) -> None:
    response = Client().get("/api/projects/")

    assert response.status_code in (401, 403)
    assert (
        logged(caplog)[-1].getMessage()
        == f"GET /api/projects/ {response.status_code} user=anonymous"
    )


def test_a_server_error_keeps_its_traceback(db: None, caplog: pytest.LogCaptureFixture) -> None:
    response = Client(raise_request_exception=False).get("/broken/?q=x")

    assert response.status_code == 500
    [record] = logged(caplog)
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "Internal Server Error: /broken/"
    assert "Traceback (most recent call last)" in printed(record)
    assert "RuntimeError: The view broke on purpose." in printed(record)
