from __future__ import annotations

import secrets
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from curation.models import ApiToken
from curation.models.accounts import api_key_hash
from curation.services.audit import audit_log

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


@transaction.atomic
def api_token_create(
    *, user: AbstractBaseUser, name: str, lifetime_days: int | None = None
) -> tuple[ApiToken, str]:
    """Make a token for `user` and return it with its key, which is stored only as a hash: the
    caller shows it once. It expires after `lifetime_days`, at most API_TOKEN_LIFETIME_DAYS."""
    days = min(lifetime_days or settings.API_TOKEN_LIFETIME_DAYS, settings.API_TOKEN_LIFETIME_DAYS)
    key = secrets.token_urlsafe(32)
    token = ApiToken(
        user=user,
        name=name,
        key_hash=api_key_hash(key),
        prefix=key[:8],
        expires_at=timezone.now() + timedelta(days=days),
    )
    token.full_clean()
    token.save()
    audit_log(
        actor=user,
        action="curation.api_token.created",
        obj=token,
        after={"name": name, "expires_at": token.expires_at.isoformat()},
    )
    return token, key


@transaction.atomic
def api_token_revoke(*, actor: AbstractBaseUser, token: ApiToken) -> None:
    audit_log(
        actor=actor,
        action="curation.api_token.revoked",
        obj=token,
        before={"name": token.name, "user": token.user.get_username()},
    )
    token.delete()


@transaction.atomic
def password_change(*, user: AbstractBaseUser, password: str) -> None:
    """Set the user's own password, already checked against the old one and the validators."""
    user.set_password(password)
    user.save(update_fields=["password"])
    audit_log(actor=user, action="curation.user.password_changed", obj=user)
