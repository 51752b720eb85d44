"""The API's token authentication, against the hashes of unexpired tokens."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.db.models import Q
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from curation.models import ApiToken
from curation.models.accounts import api_key_hash

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# How stale a token's "last used" may be: a script calling in a loop then costs one write a
# minute, not one a request.
LAST_USED_GRAIN = timedelta(minutes=1)


class ApiTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`, as DRF's own (which stored keys in clear) read it."""

    def authenticate_credentials(self, key: str) -> tuple[User, ApiToken]:
        token = ApiToken.objects.select_related("user").filter(key_hash=api_key_hash(key)).first()
        if token is None or not token.user.is_active:
            raise AuthenticationFailed("Invalid token.")
        if token.expired:
            raise AuthenticationFailed("Token expired.")
        now = timezone.now()
        if token.last_used_at is None or token.last_used_at < now - LAST_USED_GRAIN:
            stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_GRAIN)
            ApiToken.objects.filter(stale, pk=token.pk).update(last_used_at=now)
        return token.user, token
