"""One tail of the event log per API process, fanned out to every open stream of the process.

The hub asks the log for what follows the last id it saw (``EventLog.wait``: a blocking ``XREAD`` on
Redis, one indexed query every ``stream_poll_seconds`` on SQLite), decodes and frames each event once,
and offers it to each live :class:`Subscriber`. A subscriber keeps at most ``bound`` frames its client has
not taken yet; one more and it is marked overflowed (its handler sends ``overflow`` and disconnects), so
a client that stops reading never grows the server's memory.

A resuming stream first reads the log itself, straight to its client (the socket paces it), up to the
hub's position, and only then turns live (:meth:`Hub.catch_up`): every event after the resume id is
delivered once, in order, with no gap between the two.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from store.base import StoreError
from store.event_filter import StreamFilter
from store.ports.events import ORIGIN, Event, EventId, EventLog

log = logging.getLogger("ctiwire.stream")
HUB_BATCH = 100  # events per read of the log: a few hundred KB at most in flight
WAIT_SECONDS = 5.0  # one blocking read; then the hub looks again (and notices it was closed)
RETRY_SECONDS = 1.0  # after the log could not be read (Redis restarting): the hub resumes from its last id
SLOT_TTL = 60.0  # an open stream's slot lapses this long after its process stops renewing it
Write = Callable[[list["Frame"]], Awaitable[None]]


class Frame:
    """One event and its wire forms (the SSE block, the NDJSON line), each made once, when first written."""

    __slots__ = ("id", "kind", "data", "raw", "numbered", "_forms")

    def __init__(self, kind: str, raw: bytes, event_id: EventId | None, data: dict[str, Any]) -> None:
        """Without ``event_id`` the frame carries no ``id`` (a client's last id stays as it was)."""
        self.id, self.kind, self.data, self.raw = event_id or EventId(0, 0), kind, data, raw
        self.numbered = event_id is not None
        self._forms: dict[bool, bytes] = {}

    @classmethod
    def of(cls, event: Event) -> Frame:
        return cls(event.kind, event.data, event.id, orjson.loads(event.data))

    def form(self, ndjson: bool) -> bytes:
        made = self._forms.get(ndjson)
        if made is None:
            made = self._forms[ndjson] = self._ndjson() if ndjson else self._sse()
        return made

    def _sse(self) -> bytes:
        head = b"id: %s\n" % str(self.id).encode() if self.numbered else b""
        return head + b"event: " + self.kind.encode() + b"\ndata: " + self.raw + b"\n\n"

    def _ndjson(self) -> bytes:
        ident = b'"id":"%s",' % str(self.id).encode() if self.numbered else b""
        return b"{" + ident + b'"event":"' + self.kind.encode() + b'","data":' + self.raw + b"}\n"


def control_frame(kind: str, event_id: EventId | None, data: dict[str, Any]) -> Frame:
    return Frame(kind, orjson.dumps(data), event_id, data)


class Subscriber:
    """One open stream as the hub sees it: its filter, its frames not yet written, the last id given."""

    def __init__(self, owner: str, slot: str, flt: StreamFilter, bound: int) -> None:
        self.owner, self.slot, self.filter, self.bound = owner, slot, flt, bound
        self.queue: deque[Frame] = deque()
        self.last: EventId | None = None  # the newest id offered (the queue holds those that matched)
        self.delivered: EventId | None = None  # the newest id written to the client
        self.overflowed = False
        self.on_overflow: Callable[[], None] | None = None
        self.wake = asyncio.Event()

    def offer(self, frame: Frame) -> None:
        if self.overflowed or (self.last is not None and frame.id <= self.last):
            return  # a frame it already has (given while it caught up), or it is being closed
        self.last = frame.id
        if not self.filter.matches(frame.kind, frame.data):
            return
        if len(self.queue) < self.bound:
            self.queue.append(frame)
        else:
            self.overflowed = True
            if self.on_overflow is not None:
                self.on_overflow()
        self.wake.set()

    def take(self) -> list[Frame]:
        frames = list(self.queue)
        self.queue.clear()
        self.wake.clear()
        return frames


class Hub:
    """The process's tail of ``events`` and its live subscribers."""

    def __init__(self, events: EventLog) -> None:
        self.events = events
        self.cursor: EventId | None = None
        self.live: set[Subscriber] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._started = asyncio.Lock()

    async def start(self) -> None:
        """Begin tailing at the log's end (once; later calls return at once)."""
        async with self._started:
            if self._tasks:
                return
            self.cursor = (await self.events.horizon()).last
            self._tasks = [asyncio.create_task(self._tail()), asyncio.create_task(self._renew())]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def _tail(self) -> None:
        while True:
            try:
                batch = await self.events.wait(self.cursor, HUB_BATCH, WAIT_SECONDS)
            except StoreError as exc:
                log.warning("the event log cannot be read (retrying from %s): %s", self.cursor, exc)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            for event in batch:
                self.publish(Frame.of(event))

    def publish(self, frame: Frame) -> None:
        self.cursor = frame.id
        for subscriber in list(self.live):
            subscriber.offer(frame)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(SLOT_TTL / 3)
            try:
                await self.events.renew_slots([(s.owner, s.slot) for s in self.live], SLOT_TTL)
            except StoreError as exc:
                log.warning("could not renew the open streams' slots: %s", exc)

    async def catch_up(self, subscriber: Subscriber, after: EventId | None, write: Write) -> None:
        """Write every matching event after ``after`` up to the hub's position, then make ``subscriber``
        live. The check and the switch run without a pause between them, so the hub offers it exactly the
        events after what it read (any it read beyond the hub's position are skipped by ``last``)."""
        subscriber.last = after
        subscriber.delivered = after or ORIGIN  # what an overflow before the first frame names to resume after
        while after is not None and (self.cursor is None or after < self.cursor):
            page = await self.events.read(after, HUB_BATCH)
            if not page:
                break
            frames = [Frame.of(event) for event in page]
            after = subscriber.last = frames[-1].id
            await write([f for f in frames if subscriber.filter.matches(f.kind, f.data)])
        self.live.add(subscriber)

    def leave(self, subscriber: Subscriber) -> None:
        self.live.discard(subscriber)
