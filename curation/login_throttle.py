"""How logins are throttled: django-axes records every failure, and this module decides, from
its records, how long a login must wait.

Three counts, each within the cool-off (LOGIN_COOLOFF_MINUTES) of its last failure:

- a username from one address: locked after LOGIN_FAILURE_LIMIT failures (axes' own lock-out);
- an address, whatever the usernames: locked after LOGIN_ADDRESS_FAILURE_LIMIT failures, so
  that trying a few passwords on many usernames (password spraying) is stopped too;
- a username, whatever the addresses: never locked, since anyone anywhere could then lock a
  colleague out, but slowed down after LOGIN_FAILURE_LIMIT failures: each further attempt waits
  a delay that doubles with every failure, up to LOGIN_USERNAME_DELAY_MAX_SECONDS. The delay
  spares the addresses the user has logged in from before, so that guesses spread over many
  addresses do not slow the user down where they usually work.

The address is the connection's, or the one a proxy the operator trusts says it forwarded for
(TRUSTED_PROXY_COUNT, TRUSTED_PROXY_ADDRESSES): see `client_address`.
"""

from __future__ import annotations

import ipaddress
from datetime import datetime, timedelta
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt, AccessLog
from django.conf import settings
from django.db.models import Max, QuerySet, Sum
from django.http import HttpRequest
from django.utils import timezone

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# An IPv6 client holds at least a /64 (RFC 6177): counted by its address alone, one client
# would be 2^64 addresses, each with a full allowance of guesses.
IPV6_CLIENT_PREFIX = 64


def _parsed(text: str) -> IpAddress | None:
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _trusted_proxy(address: IpAddress) -> bool:
    return any(
        address in ipaddress.ip_network(network, strict=False)
        for network in settings.TRUSTED_PROXY_ADDRESSES
    )


def _forwarded_client(hops: list[IpAddress | None]) -> IpAddress | None:
    """The client among `hops` (X-Forwarded-For's addresses, then the connection's), as far
    as the trusted proxies vouch for it: anything left of it could be written by anyone."""
    if settings.TRUSTED_PROXY_COUNT:
        # Each proxy appended the address it received the request from; the last one is the
        # connection. A request with fewer hops did not come through them all.
        if len(hops) <= settings.TRUSTED_PROXY_COUNT:
            return hops[-1]
        return hops[-1 - settings.TRUSTED_PROXY_COUNT]
    # From the connection leftwards, past every proxy the operator named.
    for hop in reversed(hops):
        if hop is None or not _trusted_proxy(hop):
            return hop
    return hops[0]


def client_address(request: HttpRequest) -> str | None:
    """The address a login is counted against (django-axes' AXES_CLIENT_IP_CALLABLE).

    X-Forwarded-For is read only when the operator declared the proxies in front of the studio;
    otherwise anyone could name any address in it. IPv6 clients count by their /64.
    """
    # No address at all when gunicorn listens on a Unix socket: then only a declared count of
    # proxies can say who the client is.
    connection = _parsed(request.META.get("REMOTE_ADDR", ""))
    client = connection
    if settings.TRUSTED_PROXY_COUNT or settings.TRUSTED_PROXY_ADDRESSES:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        hops = [_parsed(hop) for hop in forwarded.split(",") if hop.strip()]
        # An unreadable hop where the client should be: the proxies were not the ones
        # declared, and the connection is all that is known.
        client = _forwarded_client([*hops, connection]) or connection
    if client is None:
        return None
    if isinstance(client, ipaddress.IPv6Address):
        return str(ipaddress.ip_network(f"{client}/{IPV6_CLIENT_PREFIX}", strict=False)[0])
    return str(client)


def _failures(attempts: QuerySet[AccessAttempt]) -> tuple[int, datetime | None]:
    counted = attempts.aggregate(failures=Sum("failures_since_start"), last=Max("attempt_time"))
    return counted["failures"] or 0, counted["last"]


def login_wait(*, username: str | None, address: str | None) -> timedelta:
    """How long a login for `username` from `address` must wait; zero when it may be tried."""
    now = timezone.now()
    cool_off = settings.AXES_COOLOFF_TIME
    recent = AccessAttempt.objects.filter(attempt_time__gte=now - cool_off)
    waits = [timedelta(0)]

    pair_failures, pair_last = _failures(recent.filter(username=username, ip_address=address))
    if pair_last and pair_failures >= settings.AXES_FAILURE_LIMIT:
        waits.append(pair_last + cool_off - now)

    address_failures, address_last = _failures(recent.filter(ip_address=address))
    if address_last and address_failures >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
        waits.append(address_last + cool_off - now)

    user_failures, user_last = _failures(recent.filter(username=username))
    if user_last and user_failures >= settings.AXES_FAILURE_LIMIT:
        known_address = AccessLog.objects.filter(username=username, ip_address=address).exists()
        if not known_address:
            doublings = min(user_failures - settings.AXES_FAILURE_LIMIT, 32)
            delay = min(2**doublings, settings.LOGIN_USERNAME_DELAY_MAX_SECONDS)
            waits.append(user_last + timedelta(seconds=delay) - now)
    return max(waits)


def request_login_wait(request: HttpRequest, credentials: dict[str, Any] | None) -> timedelta:
    return login_wait(
        username=get_client_username(request, credentials),
        address=getattr(request, "axes_ip_address", None) or client_address(request),
    )


class LoginThrottle(AxesDatabaseHandler):
    """django-axes' handler, which records the failures, refusing a login while it must wait.

    A refused login is not counted as a failure (AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT
    is off), so that repeating it does not prolong the wait, nor the delay of a username.
    """

    def is_locked(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> bool:
        return request_login_wait(request, credentials) > timedelta(0)
