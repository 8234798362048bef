"""The event log of the production mode: one Redis Stream shared by every process.

Redis issues the ids (``XADD *``: ``<ms>-<seq>``, always growing), so every reader sees one order; each
API process blocks on ``XREAD`` for what follows the last id it saw. Each append first trims what is
older than the retention (``XTRIM MINID ~``: whole stream nodes at a time, so a little more is kept) and
notes beside the stream the newest id it removes (trimming leaves ``max-deleted-entry-id`` alone).
A key beside the stream holds the first id the stream ever issued: a Redis restarted without its data
starts a new stream, and an id from before is then known to be unresumable (Redis ids are times, so the
new ones are greater and would otherwise pass).

Appends retry while Redis is briefly away (a restart, a fail-over), then raise ``StoreUnavailable``.
Open streams per key are a sorted set of slots scored by their expiry.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

import redis.asyncio as aioredis
import redis.exceptions

from store.base import StoreUnavailable
from store.ports.events import DEFAULT_RETENTION, Event, EventId, EventLog, Horizon, NewEvent
from store.records import utcnow

T = TypeVar("T")
STREAM_KEY = "ctiwire:events"
FIRST_KEY = "ctiwire:events:first"
TRIMMED_KEY = "ctiwire:events:trimmed"
KEYS = (STREAM_KEY, FIRST_KEY, TRIMMED_KEY)
SLOTS_KEY = "ctiwire:stream-slots:"
BLOCK_SECONDS_MAX = 5.0
APPEND_RETRY_SECONDS = 30.0
_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)

# Trimming leaves ``max-deleted-entry-id`` alone (XDEL alone sets it), so the newest id it is about to
# remove is noted first (KEYS[3]). ARGV[1] is the cutoff in milliseconds, ARGV[2] '~' or '=' (approximate
# or exact trimming).
_TRIM = """
local old = redis.call('XREVRANGE', KEYS[1], '(' .. ARGV[1], '-', 'COUNT', 1)
if #old > 0 then redis.call('SET', KEYS[3], old[1][1]) end
local trimmed = redis.call('XTRIM', KEYS[1], 'MINID', ARGV[2], ARGV[1])
"""
# Every event of one append, the trimming and the first id in one step: nobody reads half an append.
_ADD = """
local ids = {}
for i = 3, #ARGV, 2 do
  ids[#ids + 1] = redis.call('XADD', KEYS[1], '*', 'k', ARGV[i], 'd', ARGV[i + 1])
end
redis.call('SET', KEYS[2], ids[1], 'NX')
return ids
"""
_APPEND = _TRIM + _ADD
_TRIM_ONLY = _TRIM + "return trimmed"
_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""


def _id(raw: bytes | str) -> EventId:
    return EventId.parse(raw.decode() if isinstance(raw, bytes) else raw)


def _known(raw: bytes | str | None) -> EventId | None:
    found = _id(raw) if raw else None
    return None if found is None or found == EventId(0, 0) else found


def _events(entries: list[Any]) -> list[Event]:
    return [Event(_id(raw_id), fields[b"k"].decode(), bytes(fields[b"d"])) for raw_id, fields in entries]


class RedisEventLog(EventLog):
    """Events in the Redis Stream ``ctiwire:events``."""

    name = "redis"

    def __init__(self, url: str, retention: timedelta = DEFAULT_RETENTION) -> None:
        super().__init__(retention)
        # A blocking read holds its connection up to BLOCK_SECONDS_MAX: the socket waits a little longer.
        timeout = BLOCK_SECONDS_MAX + 5
        self.client = aioredis.from_url(url, socket_timeout=timeout, socket_connect_timeout=2)  # type: ignore[no-untyped-call]

    async def close(self) -> None:
        await self.client.aclose()

    async def _call(self, fn: Callable[[], Awaitable[T]]) -> T:
        try:
            return await fn()
        except _DOWN as exc:
            raise StoreUnavailable(f"Redis: {exc}") from exc

    async def append(self, events: Sequence[NewEvent]) -> list[EventId]:
        if not events:
            return []
        cutoff = int((utcnow() - self.retention).timestamp() * 1000)
        args: list[Any] = [cutoff, "~"]
        for event in events:
            args += [event.kind, event.data]
        loop = asyncio.get_running_loop()
        deadline, pause = loop.time() + APPEND_RETRY_SECONDS, 0.1
        while True:
            try:
                ids = await self.client.eval(_APPEND, len(KEYS), *KEYS, *args)
                return [_id(raw) for raw in ids]
            except _DOWN as exc:
                if loop.time() + pause > deadline:
                    raise StoreUnavailable(f"Redis: {exc}") from exc
            await asyncio.sleep(pause)
            pause = min(pause * 2, 2.0)

    async def read(self, after: EventId | None, limit: int) -> list[Event]:
        start = f"({after}" if after is not None else "-"
        return _events(await self._call(lambda: self.client.xrange(STREAM_KEY, start, "+", count=limit)))

    async def wait(self, after: EventId | None, limit: int, timeout: float) -> list[Event]:
        block = max(1, int(min(timeout, BLOCK_SECONDS_MAX) * 1000))
        start = str(after) if after is not None else "0-0"
        found = await self._call(lambda: self.client.xread({STREAM_KEY: start}, count=limit, block=block))
        return _events(found[0][1]) if found else []

    async def horizon(self) -> Horizon:
        first, trimmed = await self._call(lambda: self.client.mget(FIRST_KEY, TRIMMED_KEY))
        try:
            info = await self._call(lambda: self.client.xinfo_stream(STREAM_KEY))
        except redis.exceptions.ResponseError:  # no stream: nothing appended since Redis started empty
            return Horizon(_known(first), _known(trimmed), None)
        return Horizon(_known(first), _known(trimmed), _known(info.get("last-generated-id")))

    async def trim(self, before: datetime) -> int:
        cutoff = int(before.timestamp() * 1000)
        return int(await self._call(lambda: self.client.eval(_TRIM_ONLY, len(KEYS), *KEYS, cutoff, "=")))

    # -- open streams ------------------------------------------------------------------------
    async def acquire_slot(self, owner: str, slot: str, limit: int, ttl: float) -> bool:
        now = time.time()
        taken = await self._call(
            lambda: self.client.eval(_ACQUIRE, 1, SLOTS_KEY + owner, now, limit, now + ttl, slot, int(ttl) + 1)
        )
        return bool(taken)

    async def renew_slots(self, slots: Sequence[tuple[str, str]], ttl: float) -> None:
        if not slots:
            return
        pipe = self.client.pipeline(transaction=False)
        for owner, slot in slots:
            pipe.zadd(SLOTS_KEY + owner, {slot: time.time() + ttl}, xx=True)
            pipe.expire(SLOTS_KEY + owner, int(ttl) + 1)
        await self._call(pipe.execute)

    async def release_slot(self, owner: str, slot: str) -> None:
        await self._call(lambda: self.client.zrem(SLOTS_KEY + owner, slot))
