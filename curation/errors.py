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


class NotAllowed(DomainError):
    """The person's role does not allow this, whatever the state of things (a move on a task
    by someone who may not make it, an import by someone who is not a manager)."""

    status = 403
