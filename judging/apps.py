from __future__ import annotations

from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    verbose_name = "Judging"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from annotation.signals import annotation_saved
        from curation.signals import evaluations_imported
        from judging import receivers

        annotation_saved.connect(receivers.detect_on_label, dispatch_uid="judging.detect_on_label")
        evaluations_imported.connect(
            receivers.keep_evaluations, dispatch_uid="judging.keep_evaluations"
        )
