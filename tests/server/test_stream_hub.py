"""The hub's positions: what a stream cut off by overflow names to resume after, on an in-memory log."""

from __future__ import annotations

from server.stream_hub import Frame, Hub, Subscriber
from store.event_filter import StreamFilter
from store.memory_events import MemoryEventLog
from store.ports.events import ORIGIN, NewEvent


async def _never(frames: list[Frame]) -> None:
    raise AssertionError("a live stream from an empty log has nothing to catch up")


async def test_an_overflow_before_the_first_frame_names_where_the_stream_began() -> None:
    log = MemoryEventLog()
    hub, subscriber = Hub(log), Subscriber("key", "slot", StreamFilter(), bound=2)
    await hub.catch_up(subscriber, hub.cursor, _never)  # live from now, on a log that holds nothing yet
    ids = await log.append([NewEvent("article", b'{"title": "t"}')] * 3)
    for event in await log.read(None, 10):
        hub.publish(Frame.of(event))  # one read of the log, before the handler took any frame
    assert subscriber.overflowed and subscriber.delivered == ORIGIN
    assert (await log.horizon()).resumable(ORIGIN)
    assert [e.id for e in await log.read(subscriber.delivered, 10)] == ids  # resuming there loses nothing


async def test_a_stream_that_began_after_events_names_the_last_one_before_it() -> None:
    log = MemoryEventLog()
    before = await log.append([NewEvent("article", b'{"title": "old"}')])
    hub, subscriber = Hub(log), Subscriber("key", "slot", StreamFilter(), bound=2)
    hub.cursor = before[-1]  # where a started hub stands: the log's end
    await hub.catch_up(subscriber, hub.cursor, _never)
    assert subscriber.delivered == before[-1]
