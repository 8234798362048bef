"""Per-key rate limits on rolling windows (spec, Limits 1-2), with the ``limits`` library.

Memory storage in the embedded mode; Redis storage when ``CTIWIRE_REDIS_URL`` is set, so every server
process charges one shared budget. A request costs its format's multiplier (config.tiers.FORMAT_COSTS).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from limits import RateLimitItemPerDay, RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.errors import StorageError
from redis.exceptions import RedisError

from config.tiers import Tier

log = logging.getLogger("ctiwire.ratelimit")


@dataclass(frozen=True, slots=True)
class Verdict:
    """Outcome of charging one request: the header values, and which limit refused it (if any)."""

    allowed: bool
    limit: int
    remaining: int
    reset: int
    exceeded: str | None = None
    exceeded_limit: int = 0


def make_storage(redis_url: str | None) -> Storage:
    """``limits`` storage for the mode: shared Redis, or this process's memory."""
    if redis_url:
        uri = redis_url.replace("redis://", "async+redis://", 1).replace("rediss://", "async+rediss://", 1)
        return RedisStorage(uri, implementation="redispy", socket_timeout=2, socket_connect_timeout=2)
    return MemoryStorage()


class RateLimiter:
    """Charges per-minute and per-day budgets of one key, on moving windows."""

    def __init__(self, storage: Storage, scale: int = 1) -> None:
        self.storage = storage
        self.strategy = MovingWindowRateLimiter(storage)
        self.scale = max(scale, 1)

    async def charge(self, key_id: str, tier: Tier, cost: int) -> Verdict:
        """Take ``cost`` from both budgets; refuse when either would be exceeded.

        When the shared limit store (Redis) is unreachable the request is served unmetered (fail open,
        logged): a SIEM's export must not fail because the limiter's backing store is down. The headers
        then report the full budget, and metering resumes by itself when Redis answers again.
        """
        try:
            return await self._charge(key_id, tier, cost)
        except (RedisError, StorageError, OSError) as exc:
            return self._unmetered(tier, exc)

    def _unmetered(self, tier: Tier, exc: Exception) -> Verdict:
        log.warning("rate-limit store unavailable, serving unmetered: %s", type(exc).__name__)
        limit = tier.requests_per_minute * self.scale
        return Verdict(True, limit, limit, int(time.time()) + 60)

    async def _charge(self, key_id: str, tier: Tier, cost: int) -> Verdict:
        minute = RateLimitItemPerMinute(tier.requests_per_minute * self.scale)
        day = RateLimitItemPerDay(tier.requests_per_day * self.scale)
        # `hit` is atomic per window (a Lua script on Redis), so two processes never both take the last slot.
        for name, item in (("minute", minute), ("day", day)):
            if not await self.strategy.hit(item, key_id, cost=cost):
                return await self._refused(key_id, minute, name, item)
        stats = await self.strategy.get_window_stats(minute, key_id)
        return Verdict(True, minute.amount, max(stats.remaining, 0), _reset(stats.reset_time))

    async def _refused(self, key_id: str, minute: RateLimitItemPerMinute, name: str,
                       item: RateLimitItemPerMinute | RateLimitItemPerDay) -> Verdict:
        stats = await self.strategy.get_window_stats(item, key_id)
        reset = _reset(stats.reset_time)
        return Verdict(False, minute.amount, 0, reset, exceeded=name, exceeded_limit=item.amount)


def _reset(reset_time: float) -> int:
    """Unix seconds (UTC) of the next free slot, never in the past."""
    return max(math.ceil(reset_time), int(time.time()) + 1)
