from __future__ import annotations

from typing import TYPE_CHECKING, cast

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from releases.models import Release
from releases.services import release_delete

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@admin.register(Release)
class ReleaseAdmin(admin.ModelAdmin):
    """Releases are read here; they are created on the project's pages, and never edited."""

    list_display = ["project", "version", "state", "public", "created_at", "built_at"]
    list_filter = ["state", "public", "project"]
    search_fields = ["version", "project__name"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Release | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Release | None = None) -> bool:
        return request.user.is_superuser

    def delete_model(self, request: HttpRequest, obj: Release) -> None:
        # Through the service, so that the deletion is audited and the files go too.
        release_delete(actor=_admin_user(request), release=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Release]) -> None:
        for release in queryset:
            release_delete(actor=_admin_user(request), release=release)


def _admin_user(request: HttpRequest) -> User:
    """Who acts in the admin: the admin site lets in only active staff
    (AdminSite.has_permission), never the anonymous user."""
    return cast("User", request.user)
