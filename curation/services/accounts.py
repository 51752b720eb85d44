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
