"""A connection's limits of requests and tokens per minute, shared by every worker that calls it.

Each limit is a token bucket kept in Redis, which every worker process and thread draws from
in one atomic script, timed by Redis's own clock so that the workers' clocks do not matter.
A bucket fills at the limit's rate (requests per minute / 60 a second) and holds at most
`JUDGE_LIMIT_BURST_SECONDS` of it (one second's worth by default, at least one request): after
a quiet spell the workers together may send that burst at once, and in any window of T seconds
at most burst + rate x T requests go out. A request's tokens are not known before its answer:
it draws an estimate (its body's size / 4, plus `max_tokens` when set), and the difference is
settled when the answer tells the usage, so that the tokens bucket may go into debt and hold
back the next requests.

A 429 that says how long to wait (`Retry-After`, or `retry-after-ms`) pauses every worker on
the connection, not only the one that got it: the pause is a key in Redis that the same script
reads before anything is drawn. A connection without limits draws nothing, and a process asks
Redis about its pause at most every PAUSE_CHECK_SECONDS (a round trip to Redis for every
request would cost as much CPU as a sixth of the call): a pause reaches the other workers
within that time.

Without Redis (the embedded default: a broker on the file system, one worker), the buckets and
pauses are kept in the worker process, and a warning says that the limits then hold for that
process alone.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from functools import cache

from django.conf import settings

logger = logging.getLogger(__name__)

# The longest pause a Retry-After may ask for: past that, the call's own retries give up.
MAX_PAUSE_SECONDS = 120.0
# Bucket keys outlive the time a bucket takes to fill, debts included.
KEY_SECONDS = 3600
# How often a process asks whether a connection without limits is paused.
PAUSE_CHECK_SECONDS = 0.1

# KEYS: requests bucket, tokens bucket, pause. ARGV: requests a second, requests burst, tokens a
# second, tokens burst, tokens asked (a rate of 0: no limit). Returns the seconds to wait, as
# text ("0": granted, both buckets drawn from).
_DRAW = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1e6
local paused = tonumber(redis.call('GET', KEYS[3]) or '0')
if paused > now then return tostring(paused - now) end
local function level(key, rate, burst)
  local stored = redis.call('HMGET', key, 'level', 'at')
  if not stored[1] then return burst end
  return math.min(burst, tonumber(stored[1]) + (now - tonumber(stored[2])) * rate)
end
local req_rate, req_burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local tok_rate, tok_burst, asked = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local wait, requests, tokens = 0, 0, 0
if req_rate > 0 then
  requests = level(KEYS[1], req_rate, req_burst)
  if requests < 1 then wait = (1 - requests) / req_rate end
end
if tok_rate > 0 then
  tokens = level(KEYS[2], tok_rate, tok_burst)
  local needed = math.min(asked, tok_burst)
  if tokens < needed then wait = math.max(wait, (needed - tokens) / tok_rate) end
end
if wait > 0 then return tostring(wait) end
if req_rate > 0 then
  redis.call('HSET', KEYS[1], 'level', tostring(requests - 1), 'at', tostring(now))
  redis.call('EXPIRE', KEYS[1], ARGV[6])
end
if tok_rate > 0 then
  redis.call('HSET', KEYS[2], 'level', tostring(tokens - asked), 'at', tostring(now))
  redis.call('EXPIRE', KEYS[2], ARGV[6])
end
return '0'
"""

# KEYS: tokens bucket. ARGV: tokens a second, tokens burst, tokens used beyond those drawn
# (negative: fewer were used, and they go back).
_SETTLE = """
local stored = redis.call('HMGET', KEYS[1], 'level', 'at')
if not stored[1] then return 0 end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1e6
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local level = math.min(burst, tonumber(stored[1]) + (now - tonumber(stored[2])) * rate)
redis.call('HSET', KEYS[1], 'level', tostring(level - tonumber(ARGV[3])), 'at', tostring(now))
return 0
"""

# KEYS: pause. Returns the seconds the pause has left, as text ("0" or less: none).
_PAUSE_LEFT = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1e6
return tostring(tonumber(redis.call('GET', KEYS[1]) or '0') - now)
"""

# KEYS: pause. ARGV: seconds. A pause only ever grows: a shorter Retry-After does not cut it.
_PAUSE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1e6
local until_ = now + tonumber(ARGV[1])
if until_ > tonumber(redis.call('GET', KEYS[1]) or '0') then
  redis.call('SET', KEYS[1], tostring(until_), 'PX', math.ceil(tonumber(ARGV[1]) * 1000))
end
return 0
"""


@dataclass(frozen=True)
class Limits:
    """A connection's limits per minute (None: none)."""

    connection_id: int
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None

    def rates(self) -> tuple[float, float, float, float]:
        """Requests a second and their burst, tokens a second and theirs (0, 0: no limit)."""
        burst_seconds = settings.JUDGE_LIMIT_BURST_SECONDS
        requests = (self.requests_per_minute or 0) / 60
        tokens = (self.tokens_per_minute or 0) / 60
        return (
            requests,
            max(1.0, requests * burst_seconds) if requests else 0.0,
            tokens,
            max(1.0, tokens * burst_seconds) if tokens else 0.0,
        )

    def burst(self) -> int:
        """The most requests the workers together may send at once after a quiet spell."""
        return math.floor(self.rates()[1])


class _RedisBuckets:
    """The buckets and pauses of every connection, in the Redis every worker shares."""

    def __init__(self, url: str) -> None:
        import redis

        client = redis.Redis.from_url(url)
        self._draw = client.register_script(_DRAW)
        self._settle = client.register_script(_SETTLE)
        self._pause = client.register_script(_PAUSE)
        self._pause_left = client.register_script(_PAUSE_LEFT)
        # Scoped to the studio's database, so that studios sharing a Redis keep apart.
        self._prefix = f"judging:limit:{settings.DATABASES['default']['NAME']}"

    def _keys(self, connection_id: int) -> list[str]:
        return [f"{self._prefix}:{connection_id}:{part}" for part in ("req", "tok", "pause")]

    def draw(self, limits: Limits, tokens: int) -> float:
        wait = self._draw(
            keys=self._keys(limits.connection_id), args=[*limits.rates(), tokens, KEY_SECONDS]
        )
        return float(wait)

    def settle(self, limits: Limits, extra_tokens: int) -> None:
        _, _, rate, burst = limits.rates()
        self._settle(keys=self._keys(limits.connection_id)[1:2], args=[rate, burst, extra_tokens])

    def pause(self, connection_id: int, seconds: float) -> None:
        self._pause(keys=self._keys(connection_id)[2:], args=[seconds])

    def paused_for(self, connection_id: int) -> float:
        return max(0.0, float(self._pause_left(keys=self._keys(connection_id)[2:])))


class _LocalBuckets:
    """The same buckets in this process alone, for a studio without Redis (one worker)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (connection, "req" or "tok") -> (level, at); connection -> paused until.
        self._levels: dict[tuple[int, str], tuple[float, float]] = {}
        self._paused: dict[int, float] = {}

    def _level(self, key: tuple[int, str], rate: float, burst: float, now: float) -> float:
        if key not in self._levels:
            return burst
        level, at = self._levels[key]
        return min(burst, level + (now - at) * rate)

    def draw(self, limits: Limits, tokens: int) -> float:
        request_rate, request_burst, token_rate, token_burst = limits.rates()
        connection = limits.connection_id
        with self._lock:
            now = time.monotonic()
            if self._paused.get(connection, 0) > now:
                return self._paused[connection] - now
            wait = 0.0
            requests = self._level((connection, "req"), request_rate, request_burst, now)
            if request_rate and requests < 1:
                wait = (1 - requests) / request_rate
            available = self._level((connection, "tok"), token_rate, token_burst, now)
            needed = min(tokens, token_burst)
            if token_rate and available < needed:
                wait = max(wait, (needed - available) / token_rate)
            if wait:
                return wait
            if request_rate:
                self._levels[(connection, "req")] = (requests - 1, now)
            if token_rate:
                self._levels[(connection, "tok")] = (available - tokens, now)
            return 0.0

    def settle(self, limits: Limits, extra_tokens: int) -> None:
        _, _, rate, burst = limits.rates()
        key = (limits.connection_id, "tok")
        with self._lock:
            if key in self._levels:
                now = time.monotonic()
                self._levels[key] = (self._level(key, rate, burst, now) - extra_tokens, now)

    def pause(self, connection_id: int, seconds: float) -> None:
        with self._lock:
            until = time.monotonic() + seconds
            self._paused[connection_id] = max(self._paused.get(connection_id, 0), until)

    def paused_for(self, connection_id: int) -> float:
        with self._lock:
            return max(0.0, self._paused.get(connection_id, 0) - time.monotonic())


@cache
def _buckets(url: str) -> _RedisBuckets | _LocalBuckets:
    if url:
        return _RedisBuckets(url)
    logger.warning(
        "REDIS_URL is not set: the connections' limits of requests and tokens per minute, and "
        "the pauses a 429 asks for, hold for each worker process alone, not for all together."
    )
    return _LocalBuckets()


def buckets() -> _RedisBuckets | _LocalBuckets:
    """Where the limits are kept: Redis when the studio has it, this process otherwise."""
    return _buckets(settings.REDIS_URL)


def wait_for_turn(limits: Limits, tokens: int) -> None:
    """Wait until the connection may send one more request of about `tokens` tokens."""
    if limits.requests_per_minute or limits.tokens_per_minute:
        while (wait := buckets().draw(limits, tokens)) > 0:
            time.sleep(wait)
    else:
        # No budget to draw from, but a pause holds for these connections as well.
        while (wait := _pauses.left(limits.connection_id)) > 0:
            time.sleep(wait)


class _PauseCache:
    """What this process last heard of each connection's pause, and when it asked."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # connection -> (asked at, paused until), on the monotonic clock
        self._known: dict[int, tuple[float, float]] = {}

    def left(self, connection_id: int) -> float:
        now = time.monotonic()
        with self._lock:
            asked, until = self._known.get(connection_id, (-PAUSE_CHECK_SECONDS, 0.0))
        if now - asked >= PAUSE_CHECK_SECONDS:
            until = now + buckets().paused_for(connection_id)
            with self._lock:
                self._known[connection_id] = (now, until)
        return min(until - now, PAUSE_CHECK_SECONDS) if until > now else 0.0

    def forget(self, connection_id: int) -> None:
        with self._lock:
            self._known.pop(connection_id, None)


_pauses = _PauseCache()


def settle_tokens(limits: Limits, extra_tokens: int) -> None:
    """Tell the bucket how many tokens a request took beyond the estimate it drew."""
    if limits.tokens_per_minute and extra_tokens:
        buckets().settle(limits, extra_tokens)


def pause_connection(connection_id: int, seconds: float) -> None:
    """Hold back every worker's requests to the connection for this long (a 429 asked)."""
    if seconds > 0:
        buckets().pause(connection_id, min(seconds, MAX_PAUSE_SECONDS))
        # This process knows at once; the others within PAUSE_CHECK_SECONDS.
        _pauses.forget(connection_id)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The wait an answer asks for, in seconds: `retry-after-ms`, or `Retry-After` as seconds or
    as a date; None when it asks for none that can be read."""
    get = headers.get
    milliseconds = get("retry-after-ms")
    if milliseconds:
        try:
            return float(milliseconds) / 1000
        except ValueError:
            pass
    value = get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None
