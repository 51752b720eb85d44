"""Accounts: API tokens, passwords, and what site administrators change of a user."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import TYPE_CHECKING

from axes.utils import reset as axes_reset
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import transaction
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from curation.errors import Conflict
from curation.models import ApiToken
from curation.models.accounts import api_key_hash
from curation.selectors import user_may_create_projects
from curation.services.audit import audit_log
from curation.usernames import account_lookalike, username_normalise

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@transaction.atomic
def api_token_create(
    *, user: User, name: str, lifetime_days: int | None = None
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
def api_token_revoke(*, actor: User, token: ApiToken) -> None:
    audit_log(
        actor=actor,
        action="curation.api_token.revoked",
        obj=token,
        before={"name": token.name, "user": token.user.get_username()},
    )
    token.delete()


@sensitive_variables("password")
def password_change(*, user: User, password: str) -> int:
    """Set the user's own password, already checked against the old one and the validators,
    and revoke their API tokens: a password changed because it leaked must not leave a token
    made with it working. Returns how many tokens were revoked."""
    # Not as a decorator: the decorator's frame would show the password in an error report.
    with transaction.atomic():
        user.set_password(password)
        user.save(update_fields=["password"])
        tokens = list(ApiToken.objects.filter(user=user).order_by("pk"))
        for token in tokens:
            api_token_revoke(actor=user, token=token)
        audit_log(
            actor=user,
            action="curation.user.password_changed",
            obj=user,
            after={"api_tokens_revoked": len(tokens)},
        )
        return len(tokens)


def _project_creation_permission() -> Permission:
    return Permission.objects.get(content_type__app_label="curation", codename="add_project")


@sensitive_variables("password")
def user_create(*, actor: User, username: str, password: str) -> User:
    """A new account, made by a site administrator with a password they pass on. Refused when
    an account's username reads the same (case, Unicode forms, look-alike letters)."""
    username = username_normalise(username)
    taken = account_lookalike(username)
    if taken is not None:
        raise Conflict(f"There is already an account “{taken}”, which reads as “{username}”.")
    # Not as a decorator: the decorator's frame would show the password in an error report.
    with transaction.atomic():
        user = get_user_model()(username=username)
        user.set_password(password)
        user.full_clean()
        user.save()
        audit_log(
            actor=actor, action="curation.user.created", obj=user, after={"username": username}
        )
        return user


@transaction.atomic
def user_update(*, actor: User, user: User, is_active: bool, may_create_projects: bool) -> None:
    """Whether `user` may log in, and whether they may create projects (Django's permission
    curation.add_project, which the studio's project page checks)."""
    before = {"is_active": user.is_active, "may_create_projects": user_may_create_projects(user)}
    user.is_active = is_active
    user.save(update_fields=["is_active"])
    if may_create_projects:
        user.user_permissions.add(_project_creation_permission())
    else:
        user.user_permissions.remove(_project_creation_permission())
    after = {"is_active": is_active, "may_create_projects": may_create_projects}
    if after != before:
        audit_log(actor=actor, action="curation.user.changed", obj=user, before=before, after=after)


@transaction.atomic
def login_lockout_reset(*, actor: User, user: User) -> int:
    """Let `user` log in again from every address they are locked out from; returns how many
    addresses that was."""
    released = axes_reset(username=user.get_username())
    audit_log(actor=actor, action="curation.user.unlocked", obj=user, after={"addresses": released})
    return released
