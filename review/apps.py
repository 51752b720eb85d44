from __future__ import annotations

from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from annotation.signals import annotation_saved
        from judging.signals import verdicts_saved
        from review import receivers

        annotation_saved.connect(receivers.detect_on_label, dispatch_uid="review.detect_on_label")
        verdicts_saved.connect(
            receivers.detect_on_verdicts, dispatch_uid="review.detect_on_verdicts"
        )
