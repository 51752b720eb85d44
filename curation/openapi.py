"""The API schema's generator: drf-spectacular's, documenting the error answers every route may
give, which the views do not each declare."""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import SAFE_METHODS

from curation.models import Role

# What DRF's errors and the studio's domain errors (curation.api_errors) answer with.
ERROR_BODY = inline_serializer(
    name="Error", fields={"detail": serializers.CharField(help_text="What went wrong.")}
)
INVALID = OpenApiResponse(
    OpenApiTypes.OBJECT,
    description=(
        "The request is invalid: each field at fault with what is wrong with it, or why under "
        "`detail` (a body that is not JSON, a value the state of things refuses)."
    ),
)
UNAUTHORIZED = OpenApiResponse(
    ERROR_BODY, description="No credentials, or a token that is unknown, revoked or expired."
)
FORBIDDEN = OpenApiResponse(
    ERROR_BODY,
    description=(
        "Your roles in the project do not allow this, or, signed in with the session cookie, "
        "the request carries no CSRF token."
    ),
)
NOT_FOUND = OpenApiResponse(
    ERROR_BODY,
    description=(
        "No such object, a project you are not a member of (it is not shown to you), or a page "
        "past the last."
    ),
)
CONFLICT = OpenApiResponse(
    ERROR_BODY, description="Refused in the current state of things; the body says why."
)


class StudioAutoSchema(AutoSchema):
    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        for status, response in self._error_responses(operation).items():
            if str(status) not in operation["responses"]:
                operation["responses"][str(status)] = self._get_response_for_code(
                    response, str(status)
                )
        return operation

    def _error_responses(self, operation: dict[str, Any]) -> dict[int, OpenApiResponse]:
        """The errors `operation` may answer with. A token that does not open the API is refused
        on every route, even those open to anyone; input may be invalid; an object named in the
        path may not exist, or not for the caller, and a list's page may be past its last."""
        errors = {401: UNAUTHORIZED}
        writes = self.method not in SAFE_METHODS
        filters = [
            parameter
            for parameter in operation.get("parameters", [])
            if parameter["in"] == "query" and parameter["name"] != "page"
        ]
        if "requestBody" in operation or filters:
            errors[400] = INVALID
        if writes or (self._inside_a_project() and not self._open_to_every_member()):
            errors[403] = FORBIDDEN
        if "{" in self.path or self._paginated():
            errors[404] = NOT_FOUND
        if writes:
            errors[409] = CONFLICT
        return errors

    def _paginated(self) -> bool:
        return self._is_list_view() and self._get_paginator() is not None

    def _inside_a_project(self) -> bool:
        return "{slug}" in self.path

    def _open_to_every_member(self) -> bool:
        roles = getattr(self.view, "allowed_roles", None)
        return roles is not None and set(roles) == set(Role)
