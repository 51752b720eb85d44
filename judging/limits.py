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

Nothing a caller does can stall the others for long. A request that is refused, fails or gets
no answer gives back the tokens it drew (judging/client.py), since a provider counts none for
it. The tokens bucket never owes more than one request may take, a minute's worth of the limit
(`Limits.largest_call`): a request is counted for no more, and a debt read or settled past it
is cut there, so that even an answer claiming a billion tokens, or a bucket poisoned by an
older version, is paid back within a minute. A judge's `max_tokens` is bounded by its
connection besides (judging/parameters.py).

Callers take turns. Each draw names its caller (a run or a test) and the caller's group (its
project). While callers wait, the next request goes to the group served longest ago, and
within it to the caller served longest ago: a project with twenty runs gets as many calls as a
project with one, and a run with 64 threads no more than a run with one. A waiting caller that
has not asked again shortly after the wait it was told is forgotten, and one that gives up
leaves at once, so that nobody holds a turn they will not take. A caller that would wait
longer than it is willing to (`patience`) is told how long instead (LimitWait): a run then
gives its worker back and comes back later (judging/services/run_engine/execution.py).

A 429 that says how long to wait (`Retry-After`, or `retry-after-ms`) pauses every worker on
the connection, not only the one that got it: the pause is a key in Redis that the same script
reads before anything is drawn. A connection without limits draws nothing, and a process asks
Redis about its pause at most every PAUSE_CHECK_SECONDS (a round trip to Redis for every
request would cost as much CPU as a sixth of the call): a pause reaches the other workers
within that time.

Without Redis (the embedded default: a broker on the file system, one worker), the buckets and
pauses are kept in the worker process, and a warning says that the limits then hold for that
process alone; turns there are first come, first served.
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

# A waiter that has not asked again this long after the wait it was told is taken as gone.
WAITER_GRACE_SECONDS = 1.0

# KEYS: requests bucket, tokens bucket, pause, waiters (zset: caller -> when it said it would
# ask again), served (hash: group or caller -> when it was last granted a request).
# ARGV: requests a second, requests burst, tokens a second, tokens burst, tokens asked (a rate
# of 0: no limit), key lifetime, the caller's group, the caller, the tokens bucket's floor,
# a waiter's grace. Returns the seconds to wait, as text ("0": granted, both buckets drawn from).
_DRAW = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1e6
local paused = tonumber(redis.call('GET', KEYS[3]) or '0')
if paused > now then return tostring(paused - now) end
local floor = tonumber(ARGV[9])
local function level(key, rate, burst, lowest)
  local stored = redis.call('HMGET', key, 'level', 'at')
  if not stored[1] then return burst end
  local kept = math.max(lowest, tonumber(stored[1]))
  return math.min(burst, kept + (now - tonumber(stored[2])) * rate)
end
local req_rate, req_burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local tok_rate, tok_burst = tonumber(ARGV[3]), tonumber(ARGV[4])
local asked = math.min(tonumber(ARGV[5]), floor)
local wait, requests, tokens, turn = 0, 0, 0, 0
if req_rate > 0 then
  requests = level(KEYS[1], req_rate, req_burst, 0)
  if requests < 1 then wait = (1 - requests) / req_rate end
  turn = 1 / req_rate
end
if tok_rate > 0 then
  tokens = level(KEYS[2], tok_rate, tok_burst, -floor)
  local needed = math.min(asked, tok_burst)
  if tokens < needed then wait = math.max(wait, (needed - tokens) / tok_rate) end
  turn = math.max(turn, needed / tok_rate)
end
-- Fair turns: among the callers waiting, the group served longest ago goes first, and within
-- it the caller served longest ago; a caller that has not come back in time is forgotten.
local group, caller = ARGV[7], ARGV[7] .. '|' .. ARGV[8]
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
local function rank(member)
  local of_group = member:match('^(.-)|')
  local served = redis.call('HMGET', KEYS[5], 'g:' .. of_group, 'c:' .. member)
  return tonumber(served[1] or '0'), tonumber(served[2] or '0')
end
local my_group, my_own = rank(caller)
-- The turns before this caller's: one for each group ahead of its own, and for each caller
-- ahead of it in its group, one for every group waiting.
local groups_ahead, groups_waiting, callers_ahead = {}, {[group] = true}, 0
local group_count, groups_ahead_count = 1, 0
for _, other in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
  if other ~= caller then
    local other_group = other:match('^(.-)|')
    local its_group, its_own = rank(other)
    if not groups_waiting[other_group] then
      groups_waiting[other_group] = true
      group_count = group_count + 1
    end
    if other_group == group then
      if its_own < my_own or (its_own == my_own and other < caller) then
        callers_ahead = callers_ahead + 1
      end
    elseif not groups_ahead[other_group]
        and (its_group < my_group or (its_group == my_group and other_group < group)) then
      groups_ahead[other_group] = true
      groups_ahead_count = groups_ahead_count + 1
    end
  end
end
local ahead = groups_ahead_count + callers_ahead * group_count
if wait == 0 and ahead == 0 then
  if req_rate > 0 then
    redis.call('HSET', KEYS[1], 'level', tostring(requests - 1), 'at', tostring(now))
    redis.call('EXPIRE', KEYS[1], ARGV[6])
  end
  if tok_rate > 0 then
    redis.call('HSET', KEYS[2], 'level', tostring(tokens - asked), 'at', tostring(now))
    redis.call('EXPIRE', KEYS[2], ARGV[6])
  end
  redis.call('ZREM', KEYS[4], caller)
  redis.call('HSET', KEYS[5], 'g:' .. group, tostring(now), 'c:' .. caller, tostring(now))
  redis.call('EXPIRE', KEYS[5], ARGV[6])
  if redis.call('HLEN', KEYS[5]) > 1000 then
    local entries = redis.call('HGETALL', KEYS[5])
    for index = 1, #entries, 2 do
      if tonumber(entries[index + 1]) < now - tonumber(ARGV[6]) then
        redis.call('HDEL', KEYS[5], entries[index])
      end
    end
  end
  return '0'
end
wait = math.max(wait, ahead * turn, 0.001)
local due = now + wait + tonumber(ARGV[10])
if due > tonumber(redis.call('ZSCORE', KEYS[4], caller) or '0') then
  redis.call('ZADD', KEYS[4], due, caller)
end
redis.call('EXPIRE', KEYS[4], ARGV[6])
return tostring(wait)
"""

# KEYS: waiters. ARGV: the caller's group, the caller. A caller that stops waiting leaves.
_LEAVE = """
redis.call('ZREM', KEYS[1], ARGV[1] .. '|' .. ARGV[2])
return 0
"""

# KEYS: tokens bucket. ARGV: tokens a second, tokens burst, tokens used beyond those drawn
# (negative: fewer were used, and they go back), the floor the bucket never goes below.
_SETTLE = """
local stored = redis.call('HMGET', KEYS[1], 'level', 'at')
if not stored[1] then return 0 end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1e6
local rate, burst, floor = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4])
local kept = math.max(-floor, tonumber(stored[1]))
local level = math.min(burst, kept + (now - tonumber(stored[2])) * rate)
level = math.min(burst, math.max(-floor, level - tonumber(ARGV[3])))
redis.call('HSET', KEYS[1], 'level', tostring(level), 'at', tostring(now))
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

    @property
    def largest_call(self) -> int:
        """The most tokens one request is counted for, and so the deepest the tokens bucket
        may owe: a minute's worth, since a provider refuses a request larger than its tokens
        per minute. Whatever a judge asks for or an answer claims, the bucket comes back
        within a minute (or two, for a request drawn on a bucket that owed one already)."""
        return self.tokens_per_minute or 0


@dataclass(frozen=True)
class Caller:
    """Who draws from a connection's limits, for fair turns: a run or a test (`name`) and the
    project it belongs to (`group`). Calls are shared between groups first, then between the
    callers of a group, so that a project's twenty runs do not outweigh another's one."""

    group: str = ""
    name: str = ""


ANYONE = Caller()


class LimitWait(Exception):
    """The connection will not take this request for longer than the caller would wait: it
    should step aside and come back in `seconds` (or it was told to stop waiting)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"The connection's limits hold this request back for {seconds:.1f} s.")
        self.seconds = seconds


class _RedisBuckets:
    """The buckets, pauses and turns of every connection, in the Redis every worker shares."""

    def __init__(self, url: str) -> None:
        import redis

        client = redis.Redis.from_url(url)
        self._draw = client.register_script(_DRAW)
        self._leave = client.register_script(_LEAVE)
        self._settle = client.register_script(_SETTLE)
        self._pause = client.register_script(_PAUSE)
        self._pause_left = client.register_script(_PAUSE_LEFT)
        # Scoped to the studio's database, so that studios sharing a Redis keep apart.
        self._prefix = f"judging:limit:{settings.DATABASES['default']['NAME']}"

    def _keys(self, connection_id: int) -> list[str]:
        parts = ("req", "tok", "pause", "waiting", "served")
        return [f"{self._prefix}:{connection_id}:{part}" for part in parts]

    def draw(self, limits: Limits, tokens: int, caller: Caller = ANYONE) -> float:
        args: list[str | float] = [*limits.rates(), tokens, KEY_SECONDS]
        args += [caller.group, caller.name, limits.largest_call, WAITER_GRACE_SECONDS]
        return float(self._draw(keys=self._keys(limits.connection_id), args=args))

    def leave(self, limits: Limits, caller: Caller) -> None:
        keys = self._keys(limits.connection_id)[3:4]
        self._leave(keys=keys, args=[caller.group, caller.name])

    def settle(self, limits: Limits, extra_tokens: int) -> None:
        _, _, rate, burst = limits.rates()
        self._settle(
            keys=self._keys(limits.connection_id)[1:2],
            args=[rate, burst, extra_tokens, limits.largest_call],
        )

    def pause(self, connection_id: int, seconds: float) -> None:
        self._pause(keys=self._keys(connection_id)[2:3], args=[seconds])

    def paused_for(self, connection_id: int) -> float:
        return max(0.0, float(self._pause_left(keys=self._keys(connection_id)[2:3])))


class _LocalBuckets:
    """The same buckets in this process alone, for a studio without Redis (one worker). Turns
    are first come, first served: the one worker process runs one job at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (connection, "req" or "tok") -> (level, at); connection -> paused until.
        self._levels: dict[tuple[int, str], tuple[float, float]] = {}
        self._paused: dict[int, float] = {}

    def _level(
        self, key: tuple[int, str], rate: float, burst: float, now: float, lowest: float = 0
    ) -> float:
        if key not in self._levels:
            return burst
        level, at = self._levels[key]
        return min(burst, max(lowest, level) + (now - at) * rate)

    def draw(self, limits: Limits, tokens: int, caller: Caller = ANYONE) -> float:
        request_rate, request_burst, token_rate, token_burst = limits.rates()
        connection = limits.connection_id
        floor = limits.largest_call
        tokens = min(tokens, floor)
        with self._lock:
            now = time.monotonic()
            if self._paused.get(connection, 0) > now:
                return self._paused[connection] - now
            wait = 0.0
            requests = self._level((connection, "req"), request_rate, request_burst, now)
            if request_rate and requests < 1:
                wait = (1 - requests) / request_rate
            available = self._level((connection, "tok"), token_rate, token_burst, now, -floor)
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

    def leave(self, limits: Limits, caller: Caller) -> None:
        pass

    def settle(self, limits: Limits, extra_tokens: int) -> None:
        _, _, rate, burst = limits.rates()
        key = (limits.connection_id, "tok")
        floor = -limits.largest_call
        with self._lock:
            if key in self._levels:
                now = time.monotonic()
                level = self._level(key, rate, burst, now, floor) - extra_tokens
                self._levels[key] = (min(burst, max(floor, level)), now)

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


def wait_for_turn(
    limits: Limits,
    tokens: int,
    caller: Caller = ANYONE,
    *,
    patience: float | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Wait until the connection may send one more request of about `tokens` tokens, in the
    caller's turn. Raises LimitWait when the limits ask for a wait longer than `patience`
    seconds (None: any), and as soon as `stop` is set.

    The waits are each short while the caller takes its turns among others (its threads take
    them one after another); one longer than the patience means the connection is paused, or
    owes tokens, or many callers come first."""
    limited = bool(limits.requests_per_minute or limits.tokens_per_minute)
    while True:
        # No budget to draw from without limits, but a pause holds for those connections too.
        wait = (
            buckets().draw(limits, tokens, caller)
            if limited
            else _pauses.left(limits.connection_id)
        )
        if wait <= 0:
            return
        if patience is not None and wait > patience:
            if limited:
                buckets().leave(limits, caller)
            raise LimitWait(wait)
        # Without limits, the pause is asked about again soon: another 429 may lengthen it.
        nap = wait if limited else min(wait, PAUSE_CHECK_SECONDS)
        if stop is None:
            time.sleep(nap)
        elif stop.wait(nap):
            if limited:
                buckets().leave(limits, caller)
            raise LimitWait(0)


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
        return max(0.0, until - now)

    def forget(self, connection_id: int) -> None:
        with self._lock:
            self._known.pop(connection_id, None)


_pauses = _PauseCache()


def settle_tokens(limits: Limits, extra_tokens: int) -> None:
    """Tell the bucket how many tokens a request took beyond the estimate it drew (fewer:
    negative, and they go back; a refused or failed request gives back all it drew)."""
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
