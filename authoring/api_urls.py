"""The API of benchmark tasks and their review."""

from __future__ import annotations

from django.urls import path

from authoring import api

app_name = "authoring_api"

TASK = "projects/<slug:slug>/tasks/<int:task_id>/"

urlpatterns = [
    path("projects/<slug:slug>/tasks/", api.TaskList.as_view(), name="task_list"),
    path(TASK, api.TaskDetail.as_view(), name="task_detail"),
    path(f"{TASK}transitions/", api.TaskTransitions.as_view(), name="task_transitions"),
    path(f"{TASK}revisions/", api.RevisionList.as_view(), name="task_revision_list"),
    path(
        f"{TASK}revisions/<int:number>/",
        api.RevisionDetail.as_view(),
        name="task_revision_detail",
    ),
    path(f"{TASK}reviews/", api.ReviewList.as_view(), name="task_review_list"),
    path("projects/<slug:slug>/review-queue/", api.ReviewQueue.as_view(), name="review_queue"),
]
