from __future__ import annotations

from django.urls import path

from hub import views

app_name = "hub"

urlpatterns: list[object] = [
    path("p/<slug:slug>/status/", views.project_status_view, name="project_status"),
    path("p/<slug:slug>/records/", views.record_list, name="record_list"),
    path("p/<slug:slug>/records/actions/", views.record_bulk, name="record_bulk"),
    path(
        "p/<slug:slug>/records/export.<str:file_format>",
        views.record_export,
        name="record_export",
    ),
    path("p/<slug:slug>/records/<int:record_id>/", views.record_detail, name="record_detail"),
]
