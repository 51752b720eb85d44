"""Domain errors: what a service refuses, in words a user may read.

HTML views show the message; the API turns it into a response with the error's status.
"""

from __future__ import annotations


class DomainError(Exception):
    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Conflict(DomainError):
    """The request is valid but the current state forbids it (a stale edit, an illegal move)."""

    status = 409
