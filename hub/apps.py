from __future__ import annotations

from django.apps import AppConfig


class HubConfig(AppConfig):
    """No models: pages and API that read what the apps below it say."""

    name = "hub"
    verbose_name = "The record hub"
