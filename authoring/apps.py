from __future__ import annotations

from django.apps import AppConfig


class AuthoringConfig(AppConfig):
    name = "authoring"
    verbose_name = "Task authoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from authoring import receivers
        from curation.signals import project_created, project_deleting

        project_created.connect(
            receivers.seed_review_settings, dispatch_uid="authoring.seed_review_settings"
        )
        project_deleting.connect(
            receivers.clear_task_holds, dispatch_uid="authoring.clear_task_holds"
        )
