from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from rest_framework.authtoken.models import Token

from curation.services.audit import audit_log

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


@transaction.atomic
def api_token_renew(*, user: AbstractBaseUser) -> str:
    """Replace the user's API token and return the new key (the audit log never sees keys)."""
    replaced = Token.objects.filter(user=user).delete()[0] > 0
    token = Token.objects.create(user=user)
    audit_log(actor=user, action="curation.api_token.renewed", after={"replaced": replaced})
    return token.key


@transaction.atomic
def password_change(*, user: AbstractBaseUser, password: str) -> None:
    """Set the user's own password, already checked against the old one and the validators."""
    user.set_password(password)
    user.save(update_fields=["password"])
    audit_log(actor=user, action="curation.user.password_changed", obj=user)
