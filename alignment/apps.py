from __future__ import annotations

from django.apps import AppConfig


class AlignmentConfig(AppConfig):
    """No models: pages and API that read what the apps below it say."""

    name = "alignment"
    verbose_name = "Judge alignment"
