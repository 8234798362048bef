"""Tests that write while a request reads: cursor walks during inserts, exports cut short."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from ingest.demo import generate
from store.records import utcnow


async def test_a_walk_returns_every_row_once_while_articles_arrive(writable) -> None:
    store = writable.server.ctx.articles
    newcomers = [replace(a, id=f"00000000-0000-4000-8000-{i:012d}") for i, a in
                 enumerate(a for batch in generate(300, utcnow(), seed=99) for a in batch)]
    seen: list[str] = []
    cursor = None
    async with writable.server.client(writable.server.pro_key) as http:
        for page_number in range(100):
            params = {"limit": 50, "sort": "published:desc", **({"cursor": cursor} if cursor else {})}
            page = await http.get("/api/v1/articles", params=params)
            seen.extend(r["id"] for r in page.json()["data"])
            await store.upsert_articles(newcomers[page_number * 20:(page_number + 1) * 20])  # inserts mid-walk
            cursor = page.headers.get("X-Next-Cursor")
            if cursor is None:
                break
    assert len(seen) == len(set(seen)), "a row was returned twice"
    assert {a.id for a in writable.visible()} <= set(seen), "a row that existed before the walk was skipped"


async def test_a_client_that_leaves_stops_the_query(writable) -> None:
    store = writable.server.ctx.articles
    await store.upsert_articles([replace(a, id=f"10000000-0000-4000-8000-{i:012d}", is_archived=False)
                                 for i, a in enumerate(x for b in generate(4000, utcnow(), seed=5) for x in b)])
    batches = 0
    original = store.iter_article_rows

    async def counting(query, batch_size=500):
        nonlocal batches
        async for batch in original(query, batch_size):
            batches += 1
            yield batch

    store.iter_article_rows = counting  # type: ignore[method-assign]
    reader, writer = await asyncio.open_connection("127.0.0.1", int(writable.server.url.rsplit(":", 1)[1]))
    writer.write(f"GET /api/v1/articles?format=ndjson&limit=5000 HTTP/1.1\r\nHost: x\r\n"
                 f"Authorization: Bearer {writable.server.pro_key}\r\n\r\n".encode())
    await writer.drain()
    await reader.read(4096)
    writer.transport.abort()
    await asyncio.sleep(1.0)
    assert 0 < batches < 10, f"{batches} batches were read after the client left"
