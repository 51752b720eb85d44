from __future__ import annotations

from django.urls import path

from alignment import api

app_name = "alignment_api"

PROJECT = "projects/<slug:slug>"

urlpatterns: list[object] = [
    path(
        f"{PROJECT}/judges/<int:judge_id>/versions/",
        api.VersionList.as_view(),
        name="judge_versions",
    ),
    path(
        f"{PROJECT}/judges/<int:judge_id>/versions/<int:number>/",
        api.VersionDetail.as_view(),
        name="judge_version",
    ),
    path(
        f"{PROJECT}/judges/<int:judge_id>/evaluations/",
        api.EvaluationList.as_view(),
        name="judge_evaluations",
    ),
    path(
        f"{PROJECT}/judges/<int:judge_id>/evaluations/<int:evaluation_id>/",
        api.EvaluationDetail.as_view(),
        name="judge_evaluation",
    ),
]
