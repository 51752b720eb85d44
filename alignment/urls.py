from __future__ import annotations

from django.urls import path

from alignment import views

app_name = "alignment"

urlpatterns: list[object] = [
    path(
        "p/<slug:slug>/judges/<int:judge_id>/versions/",
        views.judge_versions,
        name="judge_versions",
    ),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/versions/new/",
        views.judge_version_new,
        name="judge_version_new",
    ),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/versions/<int:number>/use/",
        views.judge_version_use,
        name="judge_version_use",
    ),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/versions/<int:number>/evaluate/",
        views.judge_version_evaluate,
        name="judge_version_evaluate",
    ),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/evaluations/<int:evaluation_id>/",
        views.judge_evaluation,
        name="judge_evaluation",
    ),
]
