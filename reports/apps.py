from __future__ import annotations

from django.apps import AppConfig


class ReportsConfig(AppConfig):
    """No models: pages and API that read what the apps below it say."""

    name = "reports"
    verbose_name = "Reports"
