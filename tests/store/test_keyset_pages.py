"""keyset_pages: every row once, in order, a small first batch, the next batch read while one is written."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from store.base import keyset_pages


@dataclass(frozen=True)
class Query:
    limit: int
    after: int | None = None
    offset: int = 0


ROWS = list(range(1, 1_001))


async def test_every_row_once_in_order_with_a_small_first_batch() -> None:
    asked: list[tuple[int | None, int]] = []

    async def fetch(query: Query, size: int) -> list[int]:
        asked.append((query.after, size))
        start = 0 if query.after is None else ROWS.index(query.after) + 1
        return ROWS[start:start + size]

    got = [row async for batch in keyset_pages(Query(limit=730), 250, fetch, lambda row: row) for row in batch]
    assert got == ROWS[:730]
    # a fifth of the batch size first (the writer starts sooner), then whole batches up to the limit
    assert asked == [(None, 50), (50, 250), (300, 250), (550, 180)]


async def test_the_next_batch_is_read_while_the_caller_holds_one() -> None:
    reading = asyncio.Event()

    async def fetch(query: Query, size: int) -> list[int]:
        if query.after is not None:
            reading.set()
        start = 0 if query.after is None else ROWS.index(query.after) + 1
        return ROWS[start:start + size]

    pages = keyset_pages(Query(limit=100), 50, fetch, lambda row: row)
    first = await anext(pages)
    await asyncio.wait_for(reading.wait(), timeout=5)  # read ahead before the caller asks for more
    assert first == ROWS[:10]
    await pages.aclose()


async def test_a_short_batch_is_the_last() -> None:
    calls = 0

    async def fetch(query: Query, size: int) -> list[int]:
        nonlocal calls
        calls += 1
        start = 0 if query.after is None else ROWS.index(query.after) + 1
        return ROWS[start:start + size][:7]  # the store holds fewer rows than asked for

    got = [row async for batch in keyset_pages(Query(limit=500), 100, fetch, lambda row: row) for row in batch]
    assert got == ROWS[:7] and calls == 1
