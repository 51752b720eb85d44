"""The API of annotation: claiming a record, labelling it, and one's own labels."""

from __future__ import annotations

from django.urls import path

from annotation import api

app_name = "annotation_api"

urlpatterns = [
    path(
        "projects/<slug:slug>/annotation/claim/",
        api.LeaseClaim.as_view(),
        name="annotation_claim",
    ),
    path(
        "projects/<slug:slug>/annotation/lease/",
        api.CurrentLease.as_view(),
        name="annotation_lease",
    ),
    path(
        "projects/<slug:slug>/annotation/leases/<int:lease_id>/submit/",
        api.LeaseSubmit.as_view(),
        name="annotation_submit",
    ),
    path(
        "projects/<slug:slug>/annotation/leases/<int:lease_id>/skip/",
        api.LeaseSkip.as_view(),
        name="annotation_skip",
    ),
    path(
        "projects/<slug:slug>/annotation/mine/",
        api.MyAnnotationList.as_view(),
        name="annotation_list",
    ),
    path(
        "projects/<slug:slug>/annotation/mine/<int:annotation_id>/",
        api.MyAnnotationDetail.as_view(),
        name="annotation_detail",
    ),
]
