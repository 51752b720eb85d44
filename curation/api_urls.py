from __future__ import annotations

from django.urls import path

from curation import api, api_annotation, api_urls_tasks

app_name = "api"

urlpatterns = [
    path("projects/", api.ProjectList.as_view(), name="project_list"),
    path("projects/<slug:slug>/", api.ProjectDetail.as_view(), name="project_detail"),
    path("projects/<slug:slug>/records/", api.RecordList.as_view(), name="record_list"),
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
        "projects/<slug:slug>/annotation/claim/",
        api_annotation.LeaseClaim.as_view(),
        name="annotation_claim",
    ),
    path(
        "projects/<slug:slug>/annotation/lease/",
        api_annotation.CurrentLease.as_view(),
        name="annotation_lease",
    ),
    path(
        "projects/<slug:slug>/annotation/leases/<int:lease_id>/submit/",
        api_annotation.LeaseSubmit.as_view(),
        name="annotation_submit",
    ),
    path(
        "projects/<slug:slug>/annotation/leases/<int:lease_id>/skip/",
        api_annotation.LeaseSkip.as_view(),
        name="annotation_skip",
    ),
    path(
        "projects/<slug:slug>/annotation/mine/",
        api_annotation.MyAnnotationList.as_view(),
        name="annotation_list",
    ),
    path(
        "projects/<slug:slug>/annotation/mine/<int:annotation_id>/",
        api_annotation.MyAnnotationDetail.as_view(),
        name="annotation_detail",
    ),
]

# Benchmark tasks and their review.
urlpatterns += api_urls_tasks.urlpatterns
