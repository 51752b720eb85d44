from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from curation.errors import DomainError
from judging.client import api_key_is_set
from judging.models import (
    ConnectionCheck,
    Judge,
    JudgeRun,
    ModelConnection,
    PromptTemplate,
    Verdict,
)
from judging.services.judges import connection_check_start, connection_delete, connection_save

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _actor(request: HttpRequest) -> User | None:
    """Who changes connections in the admin, as the services take them.

    The admin site lets in signed-in staff only, but Django types `request.user` as possibly
    anonymous; the services would record an anonymous user as no one, and so does this.
    """
    return request.user if request.user.is_authenticated else None


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "answer", "project", "created_at"]
    list_filter = ["project", "answer"]
    search_fields = ["name"]

    # Versions are immutable: a change is a new version, saved from the studio's pages.
    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(ModelConnection)
class ModelConnectionAdmin(admin.ModelAdmin):
    """Where judges' calls go and with which key: for site administrators alone, since whoever
    sets these can send the key anywhere. Changes are audited."""

    list_display = [
        "name",
        "base_url",
        "api_key_env",
        "key_is_set",
        "allow_private",
        "max_concurrency",
        "requests_per_minute",
        "tokens_per_minute",
        "max_tokens",
        "price_in_per_million",
        "price_out_per_million",
    ]
    search_fields = ["name", "base_url"]
    actions = ["test"]

    @admin.display(boolean=True, description="key set in the web server's environment")
    def key_is_set(self, connection: ModelConnection) -> bool:
        return api_key_is_set(connection.api_key_env)

    def save_model(
        self, request: HttpRequest, obj: ModelConnection, form: object, change: bool
    ) -> None:
        connection_save(actor=_actor(request), connection=obj)

    def delete_model(self, request: HttpRequest, obj: ModelConnection) -> None:
        connection_delete(actor=_actor(request), connection=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ModelConnection]) -> None:
        for connection in queryset:
            connection_delete(actor=_actor(request), connection=connection)

    @admin.action(description="Test the selected connections with their first model")
    def test(self, request: HttpRequest, queryset: QuerySet[ModelConnection]) -> None:
        for connection in queryset:
            try:
                connection_check_start(
                    actor=_actor(request),
                    connection=connection,
                    model=connection.offered_models[0],
                )
            except DomainError as refused:
                self.message_user(request, f"{connection}: {refused.message}", messages.WARNING)
            else:
                self.message_user(
                    request,
                    f"{connection}: a worker is testing it; the result will be in "
                    "Connection checks.",
                )


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "protocol", "connection", "model"]
    list_filter = ["project", "protocol", "connection"]
    search_fields = ["name", "model"]
    raw_id_fields = ["template", "created_by"]


@admin.register(ConnectionCheck)
class ConnectionCheckAdmin(admin.ModelAdmin):
    list_display = ["connection", "model", "judge", "state", "message", "created_at"]
    list_filter = ["state", "connection"]
    list_select_related = ["connection", "judge"]

    # Written by the worker that makes the test; nothing to edit by hand.
    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "source", "state", "total", "valid_count", "created_at"]
    list_filter = ["state", "source", "project"]
    search_fields = ["name"]
    raw_id_fields = ["judge", "created_by"]
    # Thousands of ids: shown on the run's page in the studio, not in a form field here.
    exclude = ["record_ids"]
    readonly_fields = ["heartbeat_at", "started_at", "finished_at", "rate_samples"]


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ["record", "run", "parse_status", "label", "score", "latency_ms", "created_at"]
    list_filter = ["parse_status", "label"]
    list_select_related = ["record", "run"]
    raw_id_fields = ["run", "record"]
