from __future__ import annotations

from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    name = "releases"
    verbose_name = "Releases"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from curation.signals import project_deleting
        from releases import receivers

        project_deleting.connect(
            receivers.refuse_or_drop_releases, dispatch_uid="releases.refuse_or_drop_releases"
        )
