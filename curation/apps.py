from __future__ import annotations

from django.apps import AppConfig


class CurationConfig(AppConfig):
    name = "curation"
    verbose_name = "Curation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from curation import checks  # noqa: F401 (registers the deployment checks)
