from __future__ import annotations

from django.urls import path

from judging.views import (
    adjudication,
    agreement,
    alignment,
    connections,
    evaluators,
    judges,
    panels,
    quality,
    records,
    runs,
    source_models,
)

app_name = "judging"

urlpatterns: list[object] = [
    path("connections/", connections.connection_list, name="connection_list"),
    path("p/<slug:slug>/judges/", judges.judge_list, name="judge_list"),
    path("p/<slug:slug>/judges/new/", judges.judge_new, name="judge_new"),
    path("p/<slug:slug>/judges/templates/", judges.template_list, name="template_list"),
    path("p/<slug:slug>/judges/<int:judge_id>/", judges.judge_edit, name="judge_edit"),
    path("p/<slug:slug>/judges/<int:judge_id>/test/", judges.judge_test, name="judge_test"),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/test/<int:test_id>/",
        judges.judge_test_detail,
        name="judge_test_detail",
    ),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/versions/",
        alignment.judge_versions,
        name="judge_versions",
    ),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/versions/new/",
        alignment.judge_version_new,
        name="judge_version_new",
    ),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/versions/<int:number>/use/",
        alignment.judge_version_use,
        name="judge_version_use",
    ),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/versions/<int:number>/evaluate/",
        alignment.judge_version_evaluate,
        name="judge_version_evaluate",
    ),
    path(
        "p/<slug:slug>/judges/<int:judge_id>/evaluations/<int:evaluation_id>/",
        alignment.judge_evaluation,
        name="judge_evaluation",
    ),
    path("p/<slug:slug>/runs/", runs.run_list, name="run_list"),
    path("p/<slug:slug>/runs/panel/", panels.panel_new, name="panel_new"),
    path("p/<slug:slug>/runs/new/", runs.run_new, name="run_new"),
    path("p/<slug:slug>/runs/import/", runs.verdict_import_page, name="verdict_import"),
    path("p/<slug:slug>/runs/<int:run_id>/", runs.run_detail, name="run_detail"),
    path("p/<slug:slug>/runs/<int:run_id>/cancel/", runs.run_cancel, name="run_cancel"),
    path("p/<slug:slug>/runs/<int:run_id>/resume/", runs.run_resume, name="run_resume"),
    path(
        "p/<slug:slug>/runs/<int:run_id>/retry-errors/",
        runs.run_retry_errors,
        name="run_retry_errors",
    ),
    path(
        "p/<slug:slug>/adjudication/",
        adjudication.adjudication_queue,
        name="adjudication_queue",
    ),
    path(
        "p/<slug:slug>/adjudication/<int:record_id>/",
        adjudication.adjudication_record,
        name="adjudication_record",
    ),
    # The record list and the record page are judging's: they show what every domain below
    # said about a record (docs/architecture.md, "The record as the hub").
    path("p/<slug:slug>/records/", records.record_list, name="record_list"),
    path("p/<slug:slug>/records/actions/", records.record_bulk, name="record_bulk"),
    path("p/<slug:slug>/records/<int:record_id>/", records.record_detail, name="record_detail"),
    path("p/<slug:slug>/quality/", quality.quality, name="quality"),
    path("p/<slug:slug>/agreement/", agreement.agreement, name="agreement"),
    path("p/<slug:slug>/evaluators/", evaluators.evaluators, name="evaluators"),
    path("p/<slug:slug>/source-models/", source_models.source_models, name="source_models"),
]
