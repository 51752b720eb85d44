from __future__ import annotations

from django.urls import path

from judging.views import connections, judges, panels, runs

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
]
