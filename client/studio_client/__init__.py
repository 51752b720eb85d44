"""A Python client for the curation studio's REST API."""

from __future__ import annotations

from studio_client.client import StudioClient
from studio_client.errors import (
    ApiError,
    AuthenticationFailed,
    Conflict,
    DownloadCorrupted,
    JobFailed,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServerError,
    StudioError,
    StudioUnreachable,
    ValidationFailed,
    WaitTimedOut,
)
from studio_client.types import Progress

__all__ = [
    "ApiError",
    "AuthenticationFailed",
    "Conflict",
    "DownloadCorrupted",
    "JobFailed",
    "NotFound",
    "PermissionDenied",
    "Progress",
    "RateLimited",
    "ServerError",
    "StudioClient",
    "StudioError",
    "StudioUnreachable",
    "ValidationFailed",
    "WaitTimedOut",
]
