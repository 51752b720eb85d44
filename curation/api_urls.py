from __future__ import annotations

from django.urls import path

from curation import api

app_name = "api"

urlpatterns = [
    path("projects/", api.ProjectList.as_view(), name="project_list"),
    path("projects/<slug:slug>/", api.ProjectDetail.as_view(), name="project_detail"),
    path(
        "projects/<slug:slug>/records/<int:record_id>/",
        api.RecordDetail.as_view(),
        name="record_detail",
    ),
    path("projects/<slug:slug>/imports/", api.ImportList.as_view(), name="import_list"),
    path(
        "projects/<slug:slug>/imports/<int:batch_id>/",
        api.ImportDetail.as_view(),
        name="import_detail",
    ),
    path(
        "projects/<slug:slug>/imports/<int:batch_id>/changes/",
        api.ImportChanges.as_view(),
        name="import_changes",
    ),
]
