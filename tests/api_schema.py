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
)

from tests.curation.api_clients import api_key

# What every answer must satisfy: no server error, and a body and media type as the schema
# documents them for its status. The status code itself is not held to the documented ones
# (status_code_conformance): the schema documents the answers of a permitted call, not the 401,
# 403 and 404 of the access rules, which the role-by-route test checks.
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]


def token(user: AbstractBaseUser) -> dict[str, str]:
    """The headers of an API call as `user`."""
    return {"Authorization": f"Token {api_key(user)}"}


def served_schema(server_url: str, reader: AbstractBaseUser) -> BaseSchema:
    """The schema /api/schema/ serves, read as `reader` (it is for signed-in callers)."""
    return from_url(f"{server_url}/api/schema/?format=json", headers=token(reader))
