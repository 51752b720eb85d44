from __future__ import annotations

from django.urls import path

from judging.api import judges, runs

app_name = "judging_api"

PROJECT = "projects/<slug:slug>"

urlpatterns: list[object] = [
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
]
