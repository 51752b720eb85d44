from __future__ import annotations

from django.urls import path

from reports.views import agreement, evaluators, quality, source_models

app_name = "reports"

urlpatterns: list[object] = [
    path("p/<slug:slug>/quality/", quality.quality, name="quality"),
    path("p/<slug:slug>/agreement/", agreement.agreement, name="agreement"),
    path("p/<slug:slug>/evaluators/", evaluators.evaluators, name="evaluators"),
    path("p/<slug:slug>/source-models/", source_models.source_models, name="source_models"),
]
