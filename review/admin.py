from __future__ import annotations

from django.contrib import admin

from review.models import Adjudication, Disagreement, PendingCheck


@admin.register(Disagreement)
class DisagreementAdmin(admin.ModelAdmin):
    list_display = ["record", "kind", "state", "weight", "project", "created_at"]
    list_filter = ["kind", "state", "project"]
    list_select_related = ["record", "project"]
    raw_id_fields = ["record"]


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    list_display = ["record", "label", "reviewer", "project", "created_at"]
    list_filter = ["label", "project"]
    list_select_related = ["record", "reviewer", "project"]
    raw_id_fields = ["record", "reviewer"]


@admin.register(PendingCheck)
class PendingCheckAdmin(admin.ModelAdmin):
    """Records waiting for a worker's disagreement check: a long list means no worker runs."""

    list_display = ["record", "project", "marked_at"]
    list_filter = ["project"]
    list_select_related = ["record", "project"]

    # Written by labels and cleared by the check; nothing to edit by hand.
    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False
