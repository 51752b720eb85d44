"""What can go wrong, as exceptions: one class per kind of answer the API gives, so that a
script catches what it can handle (`except NotFound`) and lets the rest stop it.

The studio answers an error with a JSON body: `{"detail": "..."}` for most, and for a request
it refuses as invalid the fields at fault, `{"field": ["message", ...], ...}`.
"""

from __future__ import annotations

from typing import Any

import httpx


class StudioError(Exception):
    """Anything this client raises."""


class StudioUnreachable(StudioError):
    """No answer: the studio could not be reached, or did not answer within the timeout."""


class ApiError(StudioError):
    """The studio answered with an error status."""

    def __init__(self, status: int, detail: str, body: Any, method: str, url: str) -> None:
        super().__init__(f"{method} {url}: {status} {detail}")
        self.status = status
        self.detail = detail
        self.body = body
        self.method = method
        self.url = url


class AuthenticationFailed(ApiError):
    """401: the token is wrong, expired or revoked."""


class PermissionDenied(ApiError):
    """403: you are a member of the project, but your roles do not allow this."""


class NotFound(ApiError):
    """404: no such thing, or one in a project you are not a member of (the studio does not
    tell outsiders which projects exist)."""


class ValidationFailed(ApiError):
    """400: the request was refused; `field_errors` says what is wrong with which field
    (`non_field_errors` or `detail` for the request as a whole)."""

    def __init__(
        self, status: int, detail: str, body: Any, method: str, url: str, field_errors: FieldErrors
    ) -> None:
        super().__init__(status, detail, body, method, url)
        self.field_errors = field_errors


class Conflict(ApiError):
    """409: the change collides with the state of things (a label edited since you read it, a
    release that can no longer change, a version already taken)."""


class RateLimited(ApiError):
    """429: too many requests; `retry_after` is the seconds the studio asked to wait, if it
    said."""

    def __init__(
        self, status: int, detail: str, body: Any, method: str, url: str, retry_after: float | None
    ) -> None:
        super().__init__(status, detail, body, method, url)
        self.retry_after = retry_after


class ServerError(ApiError):
    """5xx: the studio failed to answer the request (its log has the cause)."""


class JobFailed(StudioError):
    """An import, judge run or release build that was followed ended as failed; `job` is its
    last state as the API gave it (an import's `errors`, a run's or a release's `error`)."""

    def __init__(self, kind: str, job: Any) -> None:
        reason = job.get("error") or _import_errors(job) or "no reason given"
        super().__init__(f"The {kind} {job.get('id')} failed: {reason}")
        self.job = job


class WaitTimedOut(StudioError):
    """A job was still going when the time given to wait for it ran out; `job` is its last
    state. The job itself goes on."""

    def __init__(self, kind: str, job: Any, seconds: float) -> None:
        super().__init__(
            f"The {kind} {job.get('id')} was still {job.get('state')} after {seconds:g} s"
        )
        self.job = job


class DownloadCorrupted(StudioError):
    """A downloaded release file does not have the size or SHA-256 its release lists."""


FieldErrors = dict[str, list[str]]


def _import_errors(job: Any) -> str:
    errors = job.get("errors") or []
    return "; ".join(
        f"{error.get('file')} {error.get('field')}: {error.get('message')}" for error in errors[:3]
    )


def error_for(response: httpx.Response) -> ApiError:
    """The exception for an error answer, with what its body says."""
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    detail = body.get("detail") if isinstance(body, dict) else None
    request = response.request
    where = (request.method, str(request.url))
    status = response.status_code
    if status == 400:
        fields = _field_errors(body)
        summary = detail or "; ".join(f"{name}: {' '.join(m)}" for name, m in fields.items())
        return ValidationFailed(status, str(summary), body, *where, field_errors=fields)
    if status == 429:
        header = response.headers.get("Retry-After", "")
        retry_after = float(header) if header.replace(".", "", 1).isdigit() else None
        return RateLimited(status, str(detail or "Too many requests"), body, *where, retry_after)
    kind = {401: AuthenticationFailed, 403: PermissionDenied, 404: NotFound, 409: Conflict}.get(
        status, ServerError if status >= 500 else ApiError
    )
    return kind(status, str(detail or response.reason_phrase), body, *where)


def _field_errors(body: Any) -> FieldErrors:
    """DRF's validation body as field -> messages (a list body is the request's as a whole;
    nested serializers' errors are kept as their text)."""
    if isinstance(body, list):
        return {"non_field_errors": [str(message) for message in body]}
    if not isinstance(body, dict):
        return {"non_field_errors": [str(body)]}
    # `detail` is the request's as a whole (a rule of the studio's, not a field's).
    return {
        name: [str(m) for m in messages] if isinstance(messages, list) else [str(messages)]
        for name, messages in body.items()
        if name != "detail"
    }
