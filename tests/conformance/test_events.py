"""The event log's behaviour, the same on every implementation: the SQLite events table, Redis Streams (a
real redis-server) and the in-process log. ``second`` is another connection to the same log, as another
process would hold (the in-process log is its own second)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from support import RedisServer

from store.memory_events import MemoryEventLog
from store.ports.events import ORIGIN, EventId, EventLog, Horizon, NewEvent
from store.records import utcnow
from store.redis_events import RedisEventLog
from store.sqlite import SqliteEventLog

LOGS = ("sqlite", "redis", "memory")


@pytest.fixture(params=LOGS)
async def pair(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[EventLog, EventLog]]:
    make = await _maker(request, tmp_path)
    first, second = make(), make()
    await first.open()
    if second is not first:
        await second.open()
    yield first, second
    await first.close()
    if second is not first:
        await second.close()


async def _maker(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], EventLog]:
    if request.param == "sqlite":
        return lambda: SqliteEventLog.in_file(tmp_path / "events.sqlite3")
    if request.param == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        client = aioredis.from_url(server.url)  # type: ignore[no-untyped-call]
        await client.flushdb()
        await client.aclose()
        return lambda: RedisEventLog(server.url)
    shared = MemoryEventLog()
    return lambda: shared


@pytest.fixture
def log(pair: tuple[EventLog, EventLog]) -> EventLog:
    return pair[0]


def _events(*names: str) -> list[NewEvent]:
    return [NewEvent("article", b'{"n":"%s"}' % name.encode()) for name in names]


async def test_appended_events_are_read_back_in_order_after_any_id(log: EventLog) -> None:
    ids = await log.append(_events("a", "b", "c"))
    assert ids == sorted(ids) and len(set(ids)) == 3
    every = await log.read(None, 10)
    assert [e.id for e in every] == ids and [e.data for e in every] == [b'{"n":"a"}', b'{"n":"b"}', b'{"n":"c"}']
    assert [e.kind for e in every] == ["article"] * 3
    assert [e.id for e in await log.read(ids[0], 10)] == ids[1:]
    assert [e.id for e in await log.read(ids[0], 1)] == ids[1:2]
    assert await log.read(ids[-1], 10) == []


async def test_appends_from_two_connections_share_one_growing_order(pair: tuple[EventLog, EventLog]) -> None:
    first, second = pair
    ids = []
    for n in range(6):
        ids += await (first if n % 2 else second).append(_events(f"e{n}"))
    assert ids == sorted(ids) and len(set(ids)) == 6
    assert [e.id for e in await first.read(None, 10)] == [e.id for e in await second.read(None, 10)] == ids


async def test_the_horizon_names_what_can_be_resumed(log: EventLog) -> None:
    assert not (await log.horizon()).resumable(EventId(1, 0))  # nothing issued: no id is known
    assert (await log.horizon()).resumable(ORIGIN)  # a reader from the start misses nothing yet
    ids = await log.append(_events("a", "b"))
    horizon = await log.horizon()
    assert horizon.resumable(ORIGIN) and [e.id for e in await log.read(ORIGIN, 10)] == ids
    assert horizon.first == ids[0] and horizon.last == ids[1] and horizon.trimmed is None
    assert horizon.resumable(ids[0]) and horizon.resumable(ids[1])
    assert not horizon.resumable(EventId(ids[1].ms + 1, 0))  # never issued
    assert not horizon.resumable(EventId(ids[0].ms - 1, 0))  # before this log began


async def test_trimmed_events_are_gone_and_their_ids_cannot_be_resumed(log: EventLog) -> None:
    old = await log.append(_events("a", "b"))
    await asyncio.sleep(0.01)
    assert await log.trim(utcnow()) == 2
    new = await log.append(_events("c"))
    assert [e.id for e in await log.read(None, 10)] == new
    horizon = await log.horizon()
    assert horizon.trimmed == old[1] and horizon.last == new[0]
    assert not horizon.resumable(old[0])  # ``b`` was after it and is gone
    assert not horizon.resumable(ORIGIN)  # so were ``a`` and ``b``
    assert horizon.resumable(old[1])  # nothing after it was lost
    assert [e.id for e in await log.read(old[1], 10)] == new


async def test_wait_returns_what_is_appended_meanwhile(pair: tuple[EventLog, EventLog]) -> None:
    reader, writer = pair
    reader.poll_seconds = 0.02
    start = (await writer.append(_events("a")))[0]
    assert [e.id for e in await reader.wait(None, 10, 1.0)] == [start]
    waiting = asyncio.ensure_future(reader.wait(start, 10, 5.0))
    await asyncio.sleep(0.1)
    assert not waiting.done()
    later = await writer.append(_events("b"))
    assert [e.id for e in await asyncio.wait_for(waiting, 5)] == later
    assert await reader.wait(later[0], 10, 0.2) == []


async def test_slots_are_bounded_per_owner_and_lapse_unless_renewed(pair: tuple[EventLog, EventLog]) -> None:
    first, second = pair
    assert await first.acquire_slot("key1", "s1", 2, 30)
    assert await second.acquire_slot("key1", "s2", 2, 30)
    assert not await first.acquire_slot("key1", "s3", 2, 30)  # the limit holds across connections
    assert await first.acquire_slot("key2", "s1", 2, 30)  # another owner counts apart
    await second.release_slot("key1", "s2")
    assert await first.acquire_slot("key1", "s3", 2, 1.0)
    await first.renew_slots([("key1", "s1")], 0.2)
    await asyncio.sleep(1.2)  # s3 (not renewed) and s1 (renewed for less) lapsed: a process that died
    assert await second.acquire_slot("key1", "s4", 2, 30) and await second.acquire_slot("key1", "s5", 2, 30)


def test_ids_are_written_and_read_as_milliseconds_and_sequence() -> None:
    assert str(EventId.parse("1700000000000-3")) == "1700000000000-3"
    assert EventId(5, 9) < EventId(6, 0) and EventId(5, 1).successor(5) == EventId(5, 2)
    assert EventId(5, 1).successor(7) == EventId(7, 0)
    for bad in ("", "12", "1-2-3", "a-1", "-1-0", "1-0x"):
        with pytest.raises(ValueError):
            EventId.parse(bad)
    assert Horizon().resumable(ORIGIN) and not Horizon(trimmed=EventId(5, 0)).resumable(ORIGIN)
    assert timedelta(days=7) == MemoryEventLog().retention
