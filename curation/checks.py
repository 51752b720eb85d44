"""Deployment checks of our own, run by `manage.py check --deploy`."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks

# As Django's own warning (security.W009) measures a key; short or repetitive keys sign
# sessions, invitation links and password resets that can be forged by guessing the key.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_DISTINCT_CHARACTERS = 5


@checks.register(checks.Tags.security, deploy=True)
def check_secret_key_strength(**kwargs: Any) -> list[checks.CheckMessage]:
    """An error, not Django's warning: a deployment must not start with a weak key."""
    key = settings.SECRET_KEY
    if len(key) >= SECRET_KEY_MIN_LENGTH and len(set(key)) >= SECRET_KEY_MIN_DISTINCT_CHARACTERS:
        return []
    return [
        checks.Error(
            f"SECRET_KEY has {len(key)} characters ({len(set(key))} distinct): it must have at "
            f"least {SECRET_KEY_MIN_LENGTH}, of at least {SECRET_KEY_MIN_DISTINCT_CHARACTERS} "
            "distinct characters.",
            hint="python3 -c 'import secrets; print(secrets.token_urlsafe(50))'",
            id="curation.E001",
        )
    ]


@checks.register(checks.Tags.security, deploy=True)
def check_proxy_declared(**kwargs: Any) -> list[checks.CheckMessage]:
    """Behind a proxy that is not declared, every login comes from the proxy's address."""
    if not settings.SECURE_PROXY_SSL_HEADER:
        return []
    if settings.TRUSTED_PROXY_COUNT or settings.TRUSTED_PROXY_ADDRESSES:
        return []
    return [
        checks.Warning(
            "BEHIND_TLS_PROXY is on, but neither TRUSTED_PROXY_COUNT nor "
            "TRUSTED_PROXY_ADDRESSES says which proxies to believe: login throttling counts "
            "every client as the proxy's address, and one person's failures slow down everybody.",
            hint="docs/manual.md, Behind a proxy.",
            id="curation.W001",
        )
    ]
