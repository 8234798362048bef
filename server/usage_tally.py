"""Requests and 429s per key and UTC day, for the usage history (``store.usage``).

The rate-limit check runs on every API request, so counting there is one dictionary step in this process;
the counts go to the store in one batch every ``usage_flush_seconds`` (and when a usage page is read, and at
shutdown), each an atomic increment, so every process of every host adds into the same rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from store.base import StoreError
from store.usage import UsageDay, UsageHistory

log = logging.getLogger("ctiwire.usage")
DAY_SECONDS = 86_400
MIN_FLUSH_SECONDS = 0.5  # a zero setting must not spin


class UsageTally:
    """This process's counts not yet in the store: (key id, day) -> [requests, refused]."""

    def __init__(self) -> None:
        self._pending: dict[tuple[str, str], list[int]] = {}
        self._day = (-1, "")  # the UTC day number and its label, computed once a day

    def count(self, key_id: str, allowed: bool, now: float) -> None:
        number = int(now // DAY_SECONDS)
        if number != self._day[0]:
            self._day = (number, time.strftime("%Y-%m-%d", time.gmtime(now)))
        counts = self._pending.setdefault((key_id, self._day[1]), [0, 0])
        counts[0] += 1
        counts[1] += not allowed

    async def flush(self, store: UsageHistory) -> None:
        """Add the pending counts to the store; kept for the next flush when the store is unavailable."""
        taken, self._pending = self._pending, {}
        if not taken:
            return
        try:
            await store.add_usage([UsageDay(key, day, n, refused) for (key, day), (n, refused) in taken.items()])
        except (StoreError, OSError) as exc:
            log.warning("usage history not saved (%s): kept for the next flush", type(exc).__name__)
            for at, (n, refused) in taken.items():
                counts = self._pending.setdefault(at, [0, 0])
                counts[0] += n
                counts[1] += refused

    async def flush_every(self, store: UsageHistory, seconds: float) -> None:
        """Run until cancelled; the last counts are flushed then too."""
        try:
            while True:
                await asyncio.sleep(max(seconds, MIN_FLUSH_SECONDS))
                await self.flush(store)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.flush(store))
