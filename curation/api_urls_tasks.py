"""The API of benchmark tasks and their review, part of the API URLconf."""

from __future__ import annotations

from django.urls import path

from curation import api_tasks

TASK = "projects/<slug:slug>/tasks/<int:task_id>/"

urlpatterns = [
    path("projects/<slug:slug>/tasks/", api_tasks.TaskList.as_view(), name="task_list"),
    path(TASK, api_tasks.TaskDetail.as_view(), name="task_detail"),
    path(f"{TASK}transitions/", api_tasks.TaskTransitions.as_view(), name="task_transitions"),
    path(f"{TASK}revisions/", api_tasks.RevisionList.as_view(), name="task_revision_list"),
    path(
        f"{TASK}revisions/<int:number>/",
        api_tasks.RevisionDetail.as_view(),
        name="task_revision_detail",
    ),
    path(f"{TASK}reviews/", api_tasks.ReviewList.as_view(), name="task_review_list"),
    path(
        "projects/<slug:slug>/review-queue/", api_tasks.ReviewQueue.as_view(), name="review_queue"
    ),
]
