"""The pages of annotation: the labelling queue, one's own labels, settings and progress."""

from __future__ import annotations

from django.urls import path

from annotation.views import labelling, progress, settings

app_name = "annotation"

urlpatterns = [
    path("p/<slug:slug>/annotate/", labelling.annotate, name="annotate"),
    path("p/<slug:slug>/annotate/next/", labelling.annotate_next, name="annotate_next"),
    path(
        "p/<slug:slug>/annotate/<int:lease_id>/",
        labelling.annotate_lease,
        name="annotate_lease",
    ),
    path(
        "p/<slug:slug>/annotate/<int:lease_id>/draft/",
        labelling.annotate_draft,
        name="annotate_draft",
    ),
    path(
        "p/<slug:slug>/annotate/<int:lease_id>/submit/",
        labelling.annotate_submit,
        name="annotate_submit",
    ),
    path(
        "p/<slug:slug>/annotate/<int:lease_id>/skip/", labelling.annotate_skip, name="annotate_skip"
    ),
    path("p/<slug:slug>/annotate/mine/", labelling.my_work, name="my_work"),
    path(
        "p/<slug:slug>/annotate/mine/<int:annotation_id>/",
        labelling.annotation_edit,
        name="annotation_edit",
    ),
    path("p/<slug:slug>/guidelines/", labelling.guidelines, name="guidelines"),
    path(
        "p/<slug:slug>/annotation/settings/",
        settings.annotation_settings,
        name="annotation_settings",
    ),
    path(
        "p/<slug:slug>/annotation/guidelines/",
        settings.guidelines_new,
        name="guidelines_new",
    ),
    path(
        "p/<slug:slug>/annotation/progress/",
        progress.annotation_progress,
        name="annotation_progress",
    ),
]
