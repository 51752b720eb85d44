"""The OpenAPI schema as the running app serves it, for tests that hold the API's answers to it
(schemathesis against a live test server)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from schemathesis import BaseSchema
from schemathesis.checks import not_a_server_error
from schemathesis.openapi import from_url
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.curation.api_clients import api_key

# What every answer must satisfy: no server error, and a status, a body and a media type as the
# schema documents them, the 401, 403, 404 and 409 of the access rules and of the state of
# things included (curation.openapi documents them).
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    content_type_conformance,
]


def token(user: AbstractBaseUser) -> dict[str, str]:
    """The headers of an API call as `user`."""
    return {"Authorization": f"Token {api_key(user)}"}


def served_schema(server_url: str, reader: AbstractBaseUser) -> BaseSchema:
    """The schema /api/schema/ serves, read as `reader` (it is for signed-in callers)."""
    return from_url(f"{server_url}/api/schema/?format=json", headers=token(reader))
