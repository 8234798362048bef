"""What every storage concern shares: its errors, the IOC statistics record and keyset paging.

The interfaces themselves are in ``store.ports``, one per concern.

Error tree::

    StoreError                 anything the store refuses or cannot do
    ├── NotFound               the record does not exist
    ├── Conflict               a uniqueness rule would break (duplicate e-mail, key name)
    ├── QuotaExceeded          a per-user limit would be passed (API keys per tier)
    └── StoreUnavailable       the database cannot be reached
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import orjson

from store.query import ArticleQuery, IocQuery, status_clock
from store.records import Ioc, parse_stored

# (sort value, id) of a row in its query's order: the keyset position cursors carry.
Position = tuple[Any, str]
ArticleRow = tuple[Position, bytes]
# What an export cites of an article: (title, url, source_name, published_at).
ArticleRefRow = tuple[str, str, str, datetime]


Q = TypeVar("Q", ArticleQuery, IocQuery)
T = TypeVar("T")


async def keyset_pages(query: Q, batch_size: int, fetch: Callable[[Q, int], Awaitable[list[T]]],
                       after: Callable[[T], Any]) -> AsyncIterator[list[T]]:
    """Pages of ``query`` by keyset (``after`` = the last row's position), ``query.limit`` rows at most.

    Both backends page this way: only the query's own offset is ever skipped, never earlier pages. While
    the caller writes one batch, the next is already being read (the database works while the
    socket drains); a batch shorter than asked for was the last.
    """
    # The first batch is a fifth of the others: the caller starts writing sooner, and the larger reads
    # that follow overlap its writes; only the first read is waited for with nothing to send.
    size = min(max(1, batch_size // 5), query.limit)
    if size <= 0:
        return
    batch = await fetch(query, size)
    remaining, ahead = query.limit, None
    try:
        while batch:
            remaining -= len(batch)
            if remaining > 0 and len(batch) == size:
                q = dataclasses.replace(query, after=after(batch[-1]), offset=0)
                size = min(batch_size, remaining)
                ahead = asyncio.ensure_future(fetch(q, size))
            yield batch
            if ahead is None:
                return
            batch, ahead = await ahead, None
    finally:
        if ahead is not None:  # the caller stopped early: drop the read ahead, and any error it met
            ahead.cancel()
            if ahead.done() and not ahead.cancelled():
                ahead.exception()


def ioc_position(query: IocQuery) -> Callable[[Ioc], tuple[datetime, str, str]]:
    """The keyset position (``IocQuery.after``) of a record in ``query``'s order: (first_seen, type, value), or
    (date_added at the query's clock, type, value) in date_added order."""
    if query.added_order:
        now = status_clock(query)
        return lambda ioc: (ioc.date_added(now), ioc.type, ioc.value)
    return lambda ioc: (ioc.first_seen, ioc.type, ioc.value)


def ioc_row_position(encoded: bytes) -> tuple[datetime, str, str]:
    """The keyset position (``IocQuery.after``) of an IOC's encoded API form: read from a batch's last row
    only, so no other row carries its position out of the database. The list's order (first_seen, type,
    value): the API forms are not read in date_added order (``iter_iocs`` is)."""
    api = orjson.loads(encoded)
    return parse_stored(api["first_seen"]), api["type"], api["value"]


class StoreError(Exception):
    """Base of every storage error."""


class NotFound(StoreError):
    """The record does not exist."""


class Conflict(StoreError):
    """A uniqueness rule would break."""


class QuotaExceeded(StoreError):
    """A per-user quota (API keys) would be exceeded."""


class StoreUnavailable(StoreError):
    """The database cannot be reached."""


@dataclass(frozen=True, slots=True)
class IocStats:
    """Totals for GET /api/v1/iocs/stats over one window."""

    total: int
    by_type: dict[str, int]
    by_confidence: dict[str, int]
    by_category: dict[str, int]
    top_sources: list[tuple[str, int]]
    # Records per UTC hour of ``modified`` ("YYYY-MM-DDTHH") through the window's second midnight, per UTC
    # day ("YYYY-MM-DD") after (store.ioc_counters.coarse): the same records as ``total``, so any series
    # summed from it adds up to the total, the window's partial first day and hour included.
    hourly: list[tuple[str, int]] = field(default_factory=list)
    # Records of the window left out of everything above because their value is on a warninglist.
    warninglisted: int = 0
