"""Read-ahead of the page a cursor walk will ask for next.

A client walking an export by ``X-Next-Cursor`` asks for the next page as soon as it has read this one.
The SQLite store reads on one thread, and between two pages that thread idles: while this page's last
rows are written, while the client turns round, and while the next request peeks at its end and reads
its first rows (a fifth of a 5,000-row page's time: BENCHMARKS.md). So
once a streamed page has read its last rows, the next page's first rows are read while they are sent,
kept under a key that names the data version and the next request's whole query, and taken (once) by
the request that matches it. A write to the data changes the version, so a kept read is never stale;
a request that does not match leaves it unused. At most ``entries`` reads are held (the oldest is
dropped first): what a walk that stops leaves behind is bounded, and pushed out by later walks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def _retrieved(task: asyncio.Future[Any]) -> None:
    """A read nobody took may have failed: its error is the next request's to meet, not the log's."""
    if not task.cancelled():
        task.exception()


class ReadAhead(Generic[T]):
    """Reads started under keys, each taken at most once; ``entries`` = 0 keeps none (and reads none)."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self._reads: dict[Hashable, asyncio.Future[T]] = {}

    def start(self, key: Hashable, read: Coroutine[Any, Any, T]) -> None:
        if self.entries <= 0:
            read.close()
            return
        self._drop(key)
        while len(self._reads) >= self.entries:
            self._drop(next(iter(self._reads)))
        task = asyncio.ensure_future(read)
        task.add_done_callback(_retrieved)
        self._reads[key] = task

    async def take(self, key: Hashable) -> T | None:
        """The read kept under ``key``, awaited if still running; None when there is none or it failed
        (the caller then reads as usual, and meets any lasting error itself)."""
        task = self._reads.pop(key, None)
        if task is None:
            return None
        try:
            return await task
        except Exception:  # a guess that failed is read again the usual way
            return None

    async def settle(self) -> None:
        """Wait until every held read has finished (or failed), leaving them held."""
        await asyncio.gather(*self._reads.values(), return_exceptions=True)

    def _drop(self, key: Hashable) -> None:
        task = self._reads.pop(key, None)
        if task is not None:
            task.cancel()

    def __len__(self) -> int:
        return len(self._reads)
