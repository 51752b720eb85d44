from __future__ import annotations

from django.urls import path

from reports import api

app_name = "reports_api"

PROJECT = "projects/<slug:slug>"

urlpatterns: list[object] = [
    path(f"{PROJECT}/quality/", api.QualityReport.as_view(), name="quality"),
    path(f"{PROJECT}/agreement/", api.AgreementReport.as_view(), name="agreement"),
    path(f"{PROJECT}/evaluators/", api.EvaluatorReport.as_view(), name="evaluators"),
    path(f"{PROJECT}/source-models/", api.SourceModelView.as_view(), name="source_models"),
]
