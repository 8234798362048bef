"""Per-key rate limits on rolling windows (spec, Limits 1-2): sliding-window counters, one round trip.

Each window (a minute, a day) keeps one counter per fixed bucket; the rolling count is the current
bucket plus the previous bucket weighted by how much of it still lies inside the window (the "sliding
window counter" of Cloudflare's and Redis's rate-limiting write-ups). Why not an exact moving window
(a list of timestamps, as the ``limits`` library keeps): a Pro key's day holds up to 1,000,000 of them,
and each request then costs three Redis calls. Here a key costs four integers, and one request one
atomic step that checks both windows and charges both or neither.

Memory counters in the embedded mode; Redis (one Lua script) when ``CTIWIRE_REDIS_URL`` is set, so
every server process charges one shared budget. A request costs its format's multiplier
(exporters.registry.format_cost).
"""

from __future__ import annotations

import abc
import functools
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError

from config.tiers import Tier
from server.usage_tally import UsageTally
from telemetry import metrics

log = logging.getLogger("ctiwire.ratelimit")

Counts = tuple[int, int]  # (previous bucket, current bucket) of one window
Charged = tuple[int, list[Counts]]  # the first window that refused (-1: none), every window's counts


@dataclass(frozen=True, slots=True)
class Verdict:
    """Outcome of charging one request: the header values, and which limit refused it (if any)."""

    allowed: bool
    limit: int
    remaining: int
    reset: int
    exceeded: str | None = None
    exceeded_limit: int = 0


@dataclass(frozen=True, slots=True)
class Window:
    """One budget: ``limit`` requests per ``seconds``, rolling."""

    name: str
    seconds: int
    limit: int

    def bucket(self, now: float) -> int:
        return int(now // self.seconds)

    def weight(self, now: float) -> float:
        """Share of the previous bucket still inside the rolling window."""
        return 1.0 - (now % self.seconds) / self.seconds

    def admit_at(self, counts: Counts, cost: int, now: float) -> float:
        """When a request of ``cost`` fits again, if nothing else is charged meanwhile."""
        prev, curr = counts
        start = self.bucket(now) * self.seconds
        if curr + cost <= self.limit:  # the previous bucket's share must decay to the room left
            return start + self.seconds * (1.0 - (self.limit - curr - cost) / prev) if prev else now
        if not curr:  # a cost above the whole limit never fits: point at the next bucket, not a division by 0
            return start + self.seconds
        # after the rollover the current bucket becomes the previous one and decays in turn
        return start + self.seconds * (2.0 - max(self.limit - cost, 0) / curr)

    def full_at(self, counts: Counts, now: float) -> float:
        """When the whole budget is back: both buckets have left the window."""
        if not any(counts):
            return now
        return self.bucket(now) * self.seconds + self.seconds * (2 if counts[1] else 1)


def rolling(counts: Counts, weight: float) -> float:
    return counts[0] * weight + counts[1]


class Counters(abc.ABC):
    """Atomic check-and-charge of several windows of one key."""

    @abc.abstractmethod
    async def charge(self, key_id: str, windows: tuple[Window, ...], cost: int, now: float) -> tuple[int, list[Counts]]:
        """Charge ``cost`` to every window when all admit it. Returns the index of the first window that
        refused (-1: charged) and each window's counts after the step."""

    def charge_now(self, key_id: str, windows: tuple[Window, ...], cost: int, now: float) -> Charged | None:
        """``charge`` when this process can answer without waiting (its own counters, a leased block),
        else None and nothing charged: every request asks, and most are answered here."""
        return None

    async def close(self) -> None:  # noqa: B027 - only networked counters hold connections
        """Release connections."""


class MemoryCounters(Counters):
    """This process's counters (embedded mode); no await inside a charge, so it is atomic on the loop."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, int], int] = {}
        self._swept = 0.0

    async def charge(self, key_id: str, windows: tuple[Window, ...], cost: int, now: float) -> tuple[int, list[Counts]]:
        return self.charge_now(key_id, windows, cost, now)

    def charge_now(self, key_id: str, windows: tuple[Window, ...], cost: int, now: float) -> tuple[int, list[Counts]]:
        held, current, counts, refused = self._counts, [], [], -1
        for i, w in enumerate(windows):  # one pass per window: this runs on every request
            bucket = w.bucket(now)
            key = (key_id, w.name, bucket)
            pair = (held.get((key_id, w.name, bucket - 1), 0), held.get(key, 0))
            if refused < 0 and rolling(pair, w.weight(now)) + cost > w.limit:
                refused = i
            current.append(key)
            counts.append(pair)
        if refused < 0:
            for key in current:
                held[key] = held.get(key, 0) + cost
            counts = [(prev, curr + cost) for prev, curr in counts]
        self._sweep(windows, now)
        return refused, counts

    def _sweep(self, windows: tuple[Window, ...], now: float) -> None:
        """Forget buckets older than the previous one, at most once a minute (bounded memory)."""
        if now - self._swept < 60:
            return
        self._swept = now
        oldest = {w.name: w.bucket(now) - 1 for w in windows}
        self._counts = {k: v for k, v in self._counts.items() if k[2] >= oldest.get(k[1], k[2])}


# KEYS: previous and current bucket of each window, in window order. ARGV: cost, then per window its
# limit, the previous bucket's weight and the current bucket's lifetime in seconds. Returns the index
# (1-based; 0: charged) of the first window that refused, then every counter after the step.
_CHARGE_LUA = """
local cost = tonumber(ARGV[1])
local values = redis.call('MGET', unpack(KEYS))
local counts, refused = {}, 0
for i = 1, #KEYS do counts[i] = tonumber(values[i] or '0') end
for w = 1, #KEYS / 2 do
  local limit, weight = tonumber(ARGV[3 * w - 1]), tonumber(ARGV[3 * w])
  if refused == 0 and counts[2 * w - 1] * weight + counts[2 * w] + cost > limit then refused = w end
end
if refused == 0 then
  for w = 1, #KEYS / 2 do
    counts[2 * w] = redis.call('INCRBY', KEYS[2 * w], cost)
    redis.call('EXPIRE', KEYS[2 * w], ARGV[3 * w + 1])
  end
end
table.insert(counts, 1, refused)
return counts
"""


class RedisCounters(Counters):
    """Counters shared by every process: one Lua script per request, atomic on the Redis server."""

    def __init__(self, url: str, timeout: float = 2.0) -> None:
        import redis.asyncio as aioredis

        self.client = aioredis.from_url(url, socket_timeout=timeout,  # type: ignore[no-untyped-call]
                                        socket_connect_timeout=timeout)
        self.script = self.client.register_script(_CHARGE_LUA)

    async def charge(self, key_id: str, windows: tuple[Window, ...], cost: int, now: float) -> tuple[int, list[Counts]]:
        # The key id in braces is a Redis Cluster hash tag: all of one key's buckets share a slot.
        keys = [f"ctiwire:rl:{{{key_id}}}:{w.name}:{b}" for w in windows for b in (w.bucket(now) - 1, w.bucket(now))]
        args: list[Any] = [cost]
        for w in windows:
            args += [w.limit, repr(w.weight(now)), 2 * w.seconds]
        refused, *values = await self.script(keys=keys, args=args)
        return int(refused) - 1, [(int(values[i]), int(values[i + 1])) for i in range(0, len(values), 2)]

    async def close(self) -> None:
        await self.client.aclose()


# A lease is at most this share of the smallest limit, and at most LEASE_MOST requests: the Free tier's
# 10 a minute leases nothing (every request is charged in Redis), the Pro tier's 1,000 leases 10.
LEASE_SHARE = 100
LEASE_MOST = 64
LEASES_KEPT = 4096


@dataclass(slots=True)
class _Lease:
    """Units charged to the shared counters ahead of use, for the buckets they were charged in."""

    buckets: tuple[int, ...]
    left: int
    counts: list[Counts]  # every window's counts right after the lease was charged

    def used(self) -> list[Counts]:
        """The counts without this process's units not yet used."""
        return [(prev, curr - self.left) for prev, curr in self.counts]


class LeasedCounters(Counters):
    """Shared counters charged in small blocks: one Redis round trip serves a block of a key's
    requests in this process instead of one.

    A block is charged with the first request that finds none left, and only when the block fits the
    budget; near the limit every request is charged alone, so a single process admits exactly what
    ``shared`` would. Units leased and not used before their minute ends stay counted: with N processes
    a key can be refused at most (N - 1) x (block - 1) requests before its limit (9 of a Pro key's 1,000
    a minute with two processes), never admitted beyond it. The headers of a request served from a block
    count the other processes' use as of the block's charge.
    """

    def __init__(self, shared: Counters) -> None:
        self.shared = shared
        self._leases: dict[str, _Lease] = {}

    def charge_now(self, key_id: str, windows: tuple[Window, ...], cost: int, now: float) -> Charged | None:
        lease = self._leases.get(key_id)
        if lease is None or not cost or lease.left < cost or lease.buckets != tuple(w.bucket(now) for w in windows):
            return None
        lease.left -= cost
        return -1, lease.used()

    async def charge(self, key_id: str, windows: tuple[Window, ...], cost: int, now: float) -> tuple[int, list[Counts]]:
        served = self.charge_now(key_id, windows, cost, now)
        if served is not None:
            return served
        buckets = tuple(w.bucket(now) for w in windows)
        lease = self._leases.get(key_id)
        have = 0
        if lease is not None and lease.buckets == buckets:
            have, lease.left = lease.left, 0  # taken out while the charge is awaited
        need = max(cost - have, 0)
        block = min(LEASE_MOST, *(w.limit // LEASE_SHARE for w in windows)) if cost else 0
        refused, counts = await self.shared.charge(key_id, windows, need + block, now)
        if refused >= 0 and block:
            block = 0
            refused, counts = await self.shared.charge(key_id, windows, need, now)
        if refused >= 0:
            if have and lease is not None:
                lease.left += have
            return refused, counts
        return -1, self._keep(key_id, _Lease(buckets, have + need + block - cost, counts)).used()

    def _keep(self, key_id: str, lease: _Lease) -> _Lease:
        held = self._leases.get(key_id)
        if held is not None and held.buckets == lease.buckets:
            lease.left += held.left  # leased by another request of this key while this one waited
        elif len(self._leases) >= LEASES_KEPT:
            self._leases = {k: v for k, v in self._leases.items() if v.buckets == lease.buckets}
        self._leases[key_id] = lease
        return lease

    async def close(self) -> None:
        await self.shared.close()


def make_counters(redis_url: str | None) -> Counters:
    """Counters for the mode: Redis shared by every process and charged in leased blocks, or this
    process's memory."""
    return LeasedCounters(RedisCounters(redis_url)) if redis_url else MemoryCounters()


class RateLimiter:
    """Charges the per-minute and per-day budgets of one key."""

    def __init__(self, counters: Counters, scale: int = 1, tally: UsageTally | None = None) -> None:
        self.counters = counters
        self.scale = max(scale, 1)
        self.tally = tally or UsageTally()  # requests and 429s per key and day, for the usage history
        self.unmetered = 0  # requests served unmetered in the current outage of the shared counters

    def windows(self, tier: Tier) -> tuple[Window, Window]:
        return _windows(tier.requests_per_minute * self.scale, tier.requests_per_day * self.scale)

    async def usage(self, key_id: str, tier: Tier) -> list[tuple[Window, int]] | None:
        """What ``key_id`` has used of each window now, read with a charge of 0 (which changes no count);
        None while the shared counters are unreachable. The account web's usage page shows it."""
        windows, now = self.windows(tier), time.time()
        try:
            _, counts = await self.counters.charge(key_id, windows, 0, now)
        except (RedisError, OSError):
            return None
        return [(w, math.ceil(rolling(c, w.weight(now)))) for w, c in zip(windows, counts, strict=True)]

    async def charge(self, key_id: str, tier: Tier, cost: int) -> Verdict:
        """Take ``cost`` from both budgets, or from neither when either would be exceeded.

        When the shared counters (Redis) are unreachable the request is served unmetered (fail open,
        logged): a SIEM's export must not fail because the limiter's backing store is down. The headers
        then report the full budget, and metering resumes by itself when Redis answers again.
        """
        windows, now = self.windows(tier), time.time()
        try:
            refused, counts = await self.counters.charge(key_id, windows, cost, now)
        except (RedisError, OSError) as exc:
            self.tally.count(key_id, True, now)
            return self._unmetered(windows[0], exc)
        self._metered_again()
        return self._counted(key_id, self._verdict(windows, refused, counts, cost, now), now)

    def charge_now(self, key_id: str, tier: Tier, cost: int) -> Verdict | None:
        """``charge`` without waiting when the counters can answer in this process, else None."""
        windows, now = self.windows(tier), time.time()
        served = self.counters.charge_now(key_id, windows, cost, now)
        return None if served is None else self._counted(key_id, self._verdict(windows, *served, cost, now), now)

    def _counted(self, key_id: str, verdict: Verdict, now: float) -> Verdict:
        self.tally.count(key_id, verdict.allowed, now)
        return verdict

    @staticmethod
    def _verdict(windows: tuple[Window, Window], refused: int, counts: list[Counts], cost: int, now: float) -> Verdict:
        minute = windows[0]
        if refused < 0:
            remaining = math.floor(minute.limit - rolling(counts[0], minute.weight(now)))
            return Verdict(True, minute.limit, max(remaining, 0), _seconds(minute.full_at(counts[0], now), now))
        window = windows[refused]
        reset = _seconds(window.admit_at(counts[refused], cost, now), now)
        return Verdict(False, minute.limit, 0, reset, exceeded=window.name, exceeded_limit=window.limit)

    def _unmetered(self, minute: Window, exc: Exception) -> Verdict:
        """Fail open. The outage is logged once when it starts and once when it ends, with the number of
        requests served unmetered (not a line per request, which floods the log)."""
        metrics().backend_errors.labels("redis").inc()
        if not self.unmetered:
            log.warning("rate-limit store unavailable (%s): serving requests unmetered until it is back",
                        type(exc).__name__)
        self.unmetered += 1
        return Verdict(True, minute.limit, minute.limit, int(time.time()) + 60)

    def _metered_again(self) -> None:
        if self.unmetered:
            log.warning("rate-limit store available again: metering resumed after %d unmetered requests",
                        self.unmetered)
            self.unmetered = 0


@functools.lru_cache(maxsize=64)
def _windows(per_minute: int, per_day: int) -> tuple[Window, Window]:
    return Window("minute", 60, per_minute), Window("day", 86_400, per_day)


def _seconds(at: float, now: float) -> int:
    """Unix seconds (UTC) of ``at``, never before the next second."""
    return max(math.ceil(at), int(now) + 1)
