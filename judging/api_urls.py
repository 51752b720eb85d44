from __future__ import annotations

from django.urls import path

from judging.api import judges, records, review, runs, scores, versions

app_name = "judging_api"

PROJECT = "projects/<slug:slug>"

urlpatterns: list[object] = [
    # The address curation served the record list from: clients kept it.
    path(f"{PROJECT}/records/", records.RecordList.as_view(), name="record_list"),
    path(f"{PROJECT}/records/bulk/", records.RecordBulk.as_view(), name="record_bulk"),
    path(f"{PROJECT}/judges/", judges.JudgeList.as_view(), name="judge_list"),
    path(
        f"{PROJECT}/judges/connections/",
        judges.ConnectionList.as_view(),
        name="connection_list",
    ),
    path(f"{PROJECT}/judges/<int:judge_id>/", judges.JudgeDetail.as_view(), name="judge_detail"),
    path(
        f"{PROJECT}/judges/<int:judge_id>/test/",
        judges.JudgeConnectionTest.as_view(),
        name="judge_test",
    ),
    path(
        f"{PROJECT}/judges/<int:judge_id>/test/<int:test_id>/",
        judges.JudgeConnectionTestDetail.as_view(),
        name="judge_test_detail",
    ),
    path(
        f"{PROJECT}/judges/<int:judge_id>/versions/",
        versions.VersionList.as_view(),
        name="judge_versions",
    ),
    path(
        f"{PROJECT}/judges/<int:judge_id>/versions/<int:number>/",
        versions.VersionDetail.as_view(),
        name="judge_version",
    ),
    path(
        f"{PROJECT}/judges/<int:judge_id>/evaluations/",
        versions.EvaluationList.as_view(),
        name="judge_evaluations",
    ),
    path(
        f"{PROJECT}/judges/<int:judge_id>/evaluations/<int:evaluation_id>/",
        versions.EvaluationDetail.as_view(),
        name="judge_evaluation",
    ),
    path(f"{PROJECT}/runs/", runs.RunList.as_view(), name="run_list"),
    path(f"{PROJECT}/runs/import/", runs.VerdictImport.as_view(), name="verdict_import"),
    path(f"{PROJECT}/runs/panels/", runs.PanelList.as_view(), name="panel_list"),
    path(f"{PROJECT}/runs/<int:run_id>/", runs.RunDetail.as_view(), name="run_detail"),
    path(f"{PROJECT}/runs/<int:run_id>/cancel/", runs.RunCancel.as_view(), name="run_cancel"),
    path(f"{PROJECT}/runs/<int:run_id>/resume/", runs.RunResume.as_view(), name="run_resume"),
    path(
        f"{PROJECT}/runs/<int:run_id>/retry-errors/",
        runs.RunRetryErrors.as_view(),
        name="run_retry_errors",
    ),
    path(f"{PROJECT}/runs/<int:run_id>/verdicts/", runs.VerdictList.as_view(), name="run_verdicts"),
    path(
        f"{PROJECT}/disagreements/",
        review.DisagreementList.as_view(),
        name="disagreement_list",
    ),
    path(
        f"{PROJECT}/disagreements/<int:disagreement_id>/",
        review.DisagreementDetail.as_view(),
        name="disagreement_detail",
    ),
    path(
        f"{PROJECT}/adjudications/",
        review.AdjudicationList.as_view(),
        name="adjudication_list",
    ),
    path(f"{PROJECT}/quality/", review.QualityReport.as_view(), name="quality"),
    path(f"{PROJECT}/agreement/", review.AgreementReport.as_view(), name="agreement"),
    path(f"{PROJECT}/evaluators/", scores.EvaluatorReport.as_view(), name="evaluators"),
    path(f"{PROJECT}/source-models/", scores.SourceModelView.as_view(), name="source_models"),
]
