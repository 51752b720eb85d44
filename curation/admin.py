from __future__ import annotations

from django.contrib import admin

from curation.models import (
    ApiToken,
    AuditEvent,
    Category,
    ImportBatch,
    Invitation,
    Membership,
    Project,
    Record,
    RiskType,
    Scenario,
)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "project", "role", "created_at"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "project__name"]
    autocomplete_fields = ["user", "project"]


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "project"]
    list_filter = ["project"]
    search_fields = ["name"]


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin):
    list_display = ["name", "category"]
    list_filter = ["category__project"]
    search_fields = ["name"]
    list_select_related = ["category"]


@admin.register(RiskType)
class RiskTypeAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "position", "project"]
    list_filter = ["project"]


@admin.register(ImportBatch)
class ImportBatchAdmin(admin.ModelAdmin):
    list_display = ["source_name", "project", "state", "created_count", "created_at"]
    list_filter = ["state", "project"]
    readonly_fields = ["created_at", "updated_at", "started_at", "finished_at"]


@admin.register(Record)
class RecordAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "category", "scenario", "gold_label", "attack_type"]
    list_filter = ["project", "gold_label", "attack_type"]
    search_fields = ["external_id"]
    list_select_related = ["project", "category", "scenario__category"]
    raw_id_fields = ["batch", "category", "scenario"]


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "action", "actor", "project", "object_repr"]
    list_filter = ["action", "project"]
    search_fields = ["action", "object_repr", "actor__username"]
    list_select_related = ["actor", "project"]

    # The audit log is evidence: nobody edits or deletes it, not even administrators.
    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_add_permission(self, request: object) -> bool:
        return False


class ViewOnlyAdmin(admin.ModelAdmin):
    """For rows that only services may write: they keep counts and the audit log in step."""

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_add_permission(self, request: object) -> bool:
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(ViewOnlyAdmin):
    """Which tokens exist, whose, and when last used; owners revoke theirs on the account page,
    audited. The keys themselves are stored nowhere."""

    list_display = ["name", "user", "prefix", "created_at", "expires_at", "last_used_at"]
    search_fields = ["name", "user__username"]
    list_select_related = ["user"]
    exclude = ["key_hash"]


@admin.register(Invitation)
class InvitationAdmin(ViewOnlyAdmin):
    list_display = ["username", "project", "role", "state", "invited_by", "expires_at"]
    list_filter = ["state", "project"]
    search_fields = ["username"]
    list_select_related = ["project", "invited_by"]
