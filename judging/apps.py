from __future__ import annotations

from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    verbose_name = "Judging"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from curation.signals import (
            evaluations_imported,
            project_deleting,
            sample_scores_imported,
            verdict_changes_taken,
        )
        from judging import receivers

        evaluations_imported.connect(
            receivers.keep_evaluations, dispatch_uid="judging.keep_evaluations"
        )
        verdict_changes_taken.connect(
            receivers.take_verdict_changes, dispatch_uid="judging.take_verdict_changes"
        )
        sample_scores_imported.connect(
            receivers.keep_sample_scores, dispatch_uid="judging.keep_sample_scores"
        )
        project_deleting.connect(
            receivers.clear_judge_holds, dispatch_uid="judging.clear_judge_holds"
        )
