from __future__ import annotations

from django.urls import path

from judging import api, api_adjudication

app_name = "judging_api"

PROJECT = "projects/<slug:slug>"

urlpatterns: list[object] = [
    path(f"{PROJECT}/judges/", api.JudgeList.as_view(), name="judge_list"),
    path(
        f"{PROJECT}/judges/connections/",
        api.ConnectionList.as_view(),
        name="connection_list",
    ),
    path(f"{PROJECT}/judges/<int:judge_id>/", api.JudgeDetail.as_view(), name="judge_detail"),
    path(
        f"{PROJECT}/judges/<int:judge_id>/test/",
        api.JudgeConnectionTest.as_view(),
        name="judge_test",
    ),
    path(
        f"{PROJECT}/judges/<int:judge_id>/test/<int:test_id>/",
        api.JudgeConnectionTestDetail.as_view(),
        name="judge_test_detail",
    ),
    path(f"{PROJECT}/runs/", api.RunList.as_view(), name="run_list"),
    path(f"{PROJECT}/runs/import/", api.VerdictImport.as_view(), name="verdict_import"),
    path(f"{PROJECT}/runs/<int:run_id>/", api.RunDetail.as_view(), name="run_detail"),
    path(f"{PROJECT}/runs/<int:run_id>/cancel/", api.RunCancel.as_view(), name="run_cancel"),
    path(f"{PROJECT}/runs/<int:run_id>/resume/", api.RunResume.as_view(), name="run_resume"),
    path(
        f"{PROJECT}/runs/<int:run_id>/retry-errors/",
        api.RunRetryErrors.as_view(),
        name="run_retry_errors",
    ),
    path(f"{PROJECT}/runs/<int:run_id>/verdicts/", api.VerdictList.as_view(), name="run_verdicts"),
    path(
        f"{PROJECT}/disagreements/",
        api_adjudication.DisagreementList.as_view(),
        name="disagreement_list",
    ),
    path(
        f"{PROJECT}/disagreements/<int:disagreement_id>/",
        api_adjudication.DisagreementDetail.as_view(),
        name="disagreement_detail",
    ),
    path(
        f"{PROJECT}/adjudications/",
        api_adjudication.AdjudicationList.as_view(),
        name="adjudication_list",
    ),
    path(f"{PROJECT}/quality/", api_adjudication.QualityReport.as_view(), name="quality"),
    path(f"{PROJECT}/agreement/", api_adjudication.AgreementReport.as_view(), name="agreement"),
]
