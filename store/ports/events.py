"""Events: the append-only log of changes the live feed reads (GET /api/v1/stream), and its open readers.

Any process that stores articles or IOC records appends their new forms here (``store.events.publish_changes``);
every API process tails the log and fans each event out to its open streams. Ids are ``<ms>-<seq>`` as in
Redis Streams: the append time in milliseconds and a sequence within it, ordered as numbers, so one
order holds for every reader and each id says when it was appended.

A log keeps at least its ``retention`` of events. Which ids it can still resume after is its
:class:`Horizon`: an id it never issued, or one with trimmed events after it, cannot be resumed silently.
"""

from __future__ import annotations

import abc
import asyncio
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import ClassVar

EVENT_KINDS: tuple[str, ...] = ("article", "ioc", "ioc-revoked")
DEFAULT_RETENTION = timedelta(days=7)
_ID = re.compile(r"^(\d{1,15})-(\d{1,15})$")


def now_ms() -> int:
    """The wall clock in milliseconds: the first half of a new id."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True, order=True)
class EventId:
    """``<ms>-<seq>``: compared as the pair of numbers."""

    ms: int
    seq: int

    def __str__(self) -> str:
        return f"{self.ms}-{self.seq}"

    @classmethod
    def parse(cls, text: str) -> EventId:
        """The id written as ``<ms>-<seq>``; ValueError for anything else."""
        found = _ID.match(text.strip())
        if found is None:
            raise ValueError(f"{text!r} is not an event id (<milliseconds>-<sequence>)")
        return cls(int(found.group(1)), int(found.group(2)))

    @property
    def at(self) -> datetime:
        return datetime.fromtimestamp(self.ms / 1000, UTC)

    def successor(self, now_ms: int) -> EventId:
        """The next id to issue at ``now_ms``: never before this one (Redis's rule for ``XADD *``)."""
        return EventId(now_ms, 0) if now_ms > self.ms else EventId(self.ms, self.seq + 1)


ORIGIN = EventId(0, 0)  # the position before any event, as Redis reads "0-0": everything the log holds


@dataclass(frozen=True, slots=True)
class NewEvent:
    """What a writer appends: the kind and one JSON object (the record's API form)."""

    kind: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Event:
    """One appended event."""

    id: EventId
    kind: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Horizon:
    """The ids a log can resume after: ``first`` issued by this log (a recreated log starts again), ``trimmed``
    the newest id removed by retention, ``last`` the newest issued. None: nothing yet."""

    first: EventId | None = None
    trimmed: EventId | None = None
    last: EventId | None = None

    def resumable(self, after: EventId) -> bool:
        """Whether every event after ``after`` is still in the log (else the reader must re-sync)."""
        if after == ORIGIN:
            return self.trimmed is None  # before every event: resumable while retention removed none
        if self.first is None or self.last is None:
            return False
        return self.first <= after <= self.last and (self.trimmed is None or after >= self.trimmed)


class EventLog(abc.ABC):
    """The live feed's log (one interface for every backend; tests/conformance/test_events.py)."""

    name: ClassVar[str]
    # How often ``wait`` asks a log that cannot block on the server (SQLite, memory) for new events.
    poll_seconds: float = 0.5

    def __init__(self, retention: timedelta = DEFAULT_RETENTION) -> None:
        self.retention = retention

    async def open(self) -> None:  # noqa: B027 (a log that needs nothing opened keeps it)
        """Connect and create what the log needs (idempotent)."""

    async def close(self) -> None:  # noqa: B027
        """Release the connection."""

    @abc.abstractmethod
    async def append(self, events: Sequence[NewEvent]) -> list[EventId]:
        """Append in order; returns the new ids, each greater than every id issued before. Events older
        than the retention may be removed on the way."""

    @abc.abstractmethod
    async def read(self, after: EventId | None, limit: int) -> list[Event]:
        """Up to ``limit`` events with ids after ``after`` (from the oldest kept when None), oldest first."""

    @abc.abstractmethod
    async def horizon(self) -> Horizon:
        """What the log can resume after now."""

    @abc.abstractmethod
    async def trim(self, before: datetime) -> int:
        """Remove the events appended before ``before``; returns how many (an approximation may keep some)."""

    async def wait(self, after: EventId | None, limit: int, timeout: float) -> list[Event]:
        """Like ``read``, waiting up to ``timeout`` seconds for an event when there is none yet."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            events = await self.read(after, limit)
            left = deadline - loop.time()
            if events or left <= 0:
                return events
            await asyncio.sleep(min(self.poll_seconds, left))

    # -- the open streams per API key, across processes ---------------------------------------
    @abc.abstractmethod
    async def acquire_slot(self, owner: str, slot: str, limit: int, ttl: float) -> bool:
        """Hold ``slot`` (one open stream) for ``owner`` (a key id) for ``ttl`` seconds, unless ``limit``
        slots are held already; a slot not renewed within its ttl (a process that died) lapses."""

    @abc.abstractmethod
    async def renew_slots(self, slots: Sequence[tuple[str, str]], ttl: float) -> None:
        """Extend each held (owner, slot) by ``ttl`` seconds from now."""

    @abc.abstractmethod
    async def release_slot(self, owner: str, slot: str) -> None:
        """Give ``slot`` back."""
