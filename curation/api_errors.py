from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from curation.errors import DomainError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus domain errors as 400 / 409 with their message."""
    if isinstance(exc, DomainError):
        return Response({"detail": exc.message}, status=exc.status)
    return drf_exception_handler(exc, context)
