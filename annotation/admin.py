from __future__ import annotations

from django.contrib import admin

from annotation.models import Annotation, GuidelineVersion, Lease
from curation.admin import ViewOnlyAdmin


@admin.register(GuidelineVersion)
class GuidelineVersionAdmin(ViewOnlyAdmin):
    list_display = ["project", "number", "created_by", "created_at"]
    list_filter = ["project"]
    list_select_related = ["project", "created_by"]


@admin.register(Lease)
class LeaseAdmin(ViewOnlyAdmin):
    list_display = ["record", "annotator", "project", "state", "expires_at"]
    list_filter = ["state", "project"]
    search_fields = ["annotator__username", "record__external_id"]
    list_select_related = ["record", "annotator", "project"]


@admin.register(Annotation)
class AnnotationAdmin(ViewOnlyAdmin):
    list_display = ["record", "annotator", "verdict", "project", "version", "created_at"]
    list_filter = ["verdict", "project"]
    search_fields = ["annotator__username", "record__external_id"]
    list_select_related = ["record", "annotator", "project"]
