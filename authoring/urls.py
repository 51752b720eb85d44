"""The pages of benchmark tasks: writing them, their review, their files and statistics."""

from __future__ import annotations

from django.urls import path

from authoring.views import import_export, reviews, settings, stats, tasks

app_name = "authoring"

TASK = "p/<slug:slug>/tasks/<int:task_id>/"

urlpatterns = [
    path("p/<slug:slug>/tasks/", tasks.task_list, name="task_list"),
    path("p/<slug:slug>/tasks/new/", tasks.task_new, name="task_new"),
    path("p/<slug:slug>/tasks/stats/", stats.task_stats, name="task_stats"),
    path("p/<slug:slug>/tasks/import/", import_export.task_import, name="task_import"),
    path(
        "p/<slug:slug>/tasks/import/<int:import_id>/",
        import_export.task_import_detail,
        name="task_import_detail",
    ),
    path("p/<slug:slug>/tasks/runs/", import_export.run_import, name="run_import"),
    path("p/<slug:slug>/export/safepro.json", import_export.export_safepro, name="export_safepro"),
    path(
        "p/<slug:slug>/export/safepro.zip",
        import_export.export_safepro_zip,
        name="export_safepro_zip",
    ),
    path("p/<slug:slug>/tasks/settings/", settings.task_settings, name="task_settings"),
    path(
        "p/<slug:slug>/tasks/settings/risk-categories/",
        settings.risk_category_create,
        name="risk_category_create",
    ),
    path(
        "p/<slug:slug>/tasks/settings/risk-categories/<int:category_id>/delete/",
        settings.risk_category_delete,
        name="risk_category_delete",
    ),
    path(
        "p/<slug:slug>/tasks/settings/rubric/",
        settings.rubric_check_create,
        name="rubric_check_create",
    ),
    path(
        "p/<slug:slug>/tasks/settings/rubric/<int:check_id>/switch/",
        settings.rubric_check_switch,
        name="rubric_check_switch",
    ),
    path(TASK, tasks.task_detail, name="task_detail"),
    path(f"{TASK}edit/", tasks.task_edit, name="task_edit"),
    path(f"{TASK}submit/", tasks.task_move, {"action": "submit"}, name="task_submit"),
    path(f"{TASK}withdraw/", tasks.task_move, {"action": "withdraw"}, name="task_withdraw"),
    path(f"{TASK}reopen/", tasks.task_move, {"action": "reopen"}, name="task_reopen"),
    path(f"{TASK}take/", tasks.task_move, {"action": "take"}, name="task_take"),
    path(f"{TASK}release/", tasks.task_move, {"action": "release"}, name="task_release"),
    path(f"{TASK}review/", reviews.task_review, name="task_review"),
    path(f"{TASK}revisions/<int:number>/", reviews.task_revision, name="task_revision"),
    path(f"{TASK}files/", tasks.task_file_upload, name="task_file_upload"),
    path(f"{TASK}files/<int:file_id>/", tasks.task_file_download, name="task_file"),
    path(f"{TASK}files/<int:file_id>/delete/", tasks.task_file_delete, name="task_file_delete"),
    path("p/<slug:slug>/reviews/", reviews.queue, name="review_queue"),
    path("p/<slug:slug>/reviews/next/", reviews.take_next, name="review_next"),
]
