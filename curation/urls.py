from __future__ import annotations

from django.urls import path

from curation import urls_tasks
from curation.views import (
    annotate,
    annotation_progress,
    annotation_settings,
    core,
    exports,
    imports,
    records,
)

app_name = "curation"

urlpatterns = [
    path("projects/new/", core.project_new, name="project_new"),
    path("p/<slug:slug>/", core.project_overview, name="project"),
    path("p/<slug:slug>/members/", core.members, name="members"),
    path(
        "p/<slug:slug>/members/<int:membership_id>/remove/",
        core.member_remove,
        name="member_remove",
    ),
    path("p/<slug:slug>/records/", records.record_list, name="record_list"),
    path("p/<slug:slug>/records/<int:record_id>/", records.record_detail, name="record_detail"),
    path("p/<slug:slug>/imports/", imports.import_list, name="import_list"),
    path("p/<slug:slug>/imports/<int:batch_id>/", imports.import_detail, name="import_detail"),
    path("p/<slug:slug>/export/rjudge.zip", exports.export_rjudge, name="export_rjudge"),
    path("p/<slug:slug>/annotate/", annotate.annotate, name="annotate"),
    path("p/<slug:slug>/annotate/next/", annotate.annotate_next, name="annotate_next"),
    path(
        "p/<slug:slug>/annotate/<int:lease_id>/draft/",
        annotate.annotate_draft,
        name="annotate_draft",
    ),
    path(
        "p/<slug:slug>/annotate/<int:lease_id>/submit/",
        annotate.annotate_submit,
        name="annotate_submit",
    ),
    path(
        "p/<slug:slug>/annotate/<int:lease_id>/skip/", annotate.annotate_skip, name="annotate_skip"
    ),
    path("p/<slug:slug>/annotate/mine/", annotate.my_work, name="my_work"),
    path(
        "p/<slug:slug>/annotate/mine/<int:annotation_id>/",
        annotate.annotation_edit,
        name="annotation_edit",
    ),
    path("p/<slug:slug>/guidelines/", annotate.guidelines, name="guidelines"),
    path(
        "p/<slug:slug>/annotation/settings/",
        annotation_settings.annotation_settings,
        name="annotation_settings",
    ),
    path(
        "p/<slug:slug>/annotation/guidelines/",
        annotation_settings.guidelines_new,
        name="guidelines_new",
    ),
    path(
        "p/<slug:slug>/annotation/progress/",
        annotation_progress.annotation_progress,
        name="annotation_progress",
    ),
]

# Benchmark tasks and their review.
urlpatterns += urls_tasks.urlpatterns
