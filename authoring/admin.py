from __future__ import annotations

from django.contrib import admin

from authoring.models import ReferenceFile, Review, RiskCategory, RubricCheck, Task, TaskRevision
from curation.admin import ViewOnlyAdmin


@admin.register(RiskCategory)
class RiskCategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "position", "project"]
    list_filter = ["project"]


@admin.register(RubricCheck)
class RubricCheckAdmin(admin.ModelAdmin):
    list_display = ["text", "active", "position", "project"]
    list_filter = ["active", "project"]


# Tasks move only through the workflow's services, which check who may act and audit each move.
@admin.register(Task)
class TaskAdmin(ViewOnlyAdmin):
    list_display = ["external_id", "sector", "occupation", "state", "author", "round", "project"]
    list_filter = ["state", "project"]
    search_fields = ["external_id", "sector", "occupation", "author__username"]
    list_select_related = ["author", "project"]


@admin.register(TaskRevision)
class TaskRevisionAdmin(ViewOnlyAdmin):
    list_display = ["task", "number", "created_by", "created_at"]
    list_select_related = ["task", "created_by"]


@admin.register(Review)
class ReviewAdmin(ViewOnlyAdmin):
    list_display = ["task", "revision", "reviewer", "decision", "created_at"]
    list_filter = ["decision"]
    list_select_related = ["task", "revision__task", "reviewer"]


@admin.register(ReferenceFile)
class ReferenceFileAdmin(ViewOnlyAdmin):
    list_display = ["name", "task", "size", "content_type", "created_at"]
    list_select_related = ["task"]
