"""Model connections for site administrators: where each one goes, whether its key is set, who
uses it and how its last test went. They are created and changed in the admin."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import Count, OuterRef, Subquery
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from judging.client import api_key_is_set
from judging.models import ConnectionCheck, ModelConnection


@require_GET
def connection_list(request: HttpRequest) -> HttpResponse:
    # Addresses and key variables are the operator's: managers never see them.
    if not request.user.is_superuser:
        raise PermissionDenied("Only site administrators see model connections.")
    last_check = ConnectionCheck.objects.filter(connection=OuterRef("pk")).order_by("-created_at")
    connections = ModelConnection.objects.annotate(
        judge_count=Count("judges"),
        last_state=Subquery(last_check.values("state")[:1]),
        last_message=Subquery(last_check.values("message")[:1]),
        last_tested_at=Subquery(last_check.values("created_at")[:1]),
    )
    rows = [(connection, api_key_is_set(connection.api_key_env)) for connection in connections]
    return render(request, "judging/connections.html", {"rows": rows})
