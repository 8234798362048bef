"""The in-process event log: for a store bundle no configuration gave a shared log (tests, an in-process
MongoDB store). Other processes never see its events."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timedelta

from store.ports.events import DEFAULT_RETENTION, Event, EventId, EventLog, Horizon, NewEvent, now_ms
from store.records import utcnow


class MemoryEventLog(EventLog):
    """A log in this process only; its slots count this process's streams."""

    name = "memory"

    def __init__(self, retention: timedelta = DEFAULT_RETENTION) -> None:
        super().__init__(retention)
        self._events: list[Event] = []
        self._horizon = Horizon()
        self._slots: dict[str, dict[str, float]] = {}

    async def append(self, events: Sequence[NewEvent]) -> list[EventId]:
        last, ids = self._horizon.last or EventId(0, 0), []
        for event in events:
            last = last.successor(now_ms())
            self._events.append(Event(last, event.kind, event.data))
            ids.append(last)
        if ids:
            self._horizon = Horizon(self._horizon.first or ids[0], self._horizon.trimmed, last)
        await self.trim(utcnow() - self.retention)
        return ids

    async def read(self, after: EventId | None, limit: int) -> list[Event]:
        return [e for e in self._events if after is None or e.id > after][:limit]

    async def horizon(self) -> Horizon:
        return self._horizon

    async def trim(self, before: datetime) -> int:
        cutoff = int(before.timestamp() * 1000)
        gone = [e for e in self._events if e.id.ms < cutoff]
        if gone:
            self._events = self._events[len(gone) :]
            self._horizon = Horizon(self._horizon.first, gone[-1].id, self._horizon.last)
        return len(gone)

    async def acquire_slot(self, owner: str, slot: str, limit: int, ttl: float) -> bool:
        held = {s: until for s, until in self._slots.get(owner, {}).items() if until > time.monotonic()}
        if len(held) >= limit:
            return False
        held[slot] = time.monotonic() + ttl
        self._slots[owner] = held
        return True

    async def renew_slots(self, slots: Sequence[tuple[str, str]], ttl: float) -> None:
        for owner, slot in slots:
            if slot in self._slots.get(owner, {}):
                self._slots[owner][slot] = time.monotonic() + ttl

    async def release_slot(self, owner: str, slot: str) -> None:
        self._slots.get(owner, {}).pop(slot, None)
