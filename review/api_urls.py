from __future__ import annotations

from django.urls import path

from review import api

app_name = "review_api"

PROJECT = "projects/<slug:slug>"

urlpatterns: list[object] = [
    path(
        f"{PROJECT}/disagreements/",
        api.DisagreementList.as_view(),
        name="disagreement_list",
    ),
    path(
        f"{PROJECT}/disagreements/<int:disagreement_id>/",
        api.DisagreementDetail.as_view(),
        name="disagreement_detail",
    ),
    path(
        f"{PROJECT}/adjudications/",
        api.AdjudicationList.as_view(),
        name="adjudication_list",
    ),
]
