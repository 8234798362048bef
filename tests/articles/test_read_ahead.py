"""A cursor walk's next page read ahead (server.readahead): served only to the request it was read
for, never stale, never for a first page asked again, and bounded."""

from __future__ import annotations

import asyncio
import csv
import io
import warnings
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import orjson
import pytest

from ingest.demo import generate
from server.readahead import ReadAhead
from store.records import utcnow

PAGE = 100


def _ids(fmt: str, body: bytes) -> list[str]:
    if fmt == "csv":
        return [row["id"] for row in csv.DictReader(io.StringIO(body.decode()))]
    return [orjson.loads(line)["id"] for line in body.splitlines()]


def _record_reads(store: Any, events: list[tuple[str, Any]]) -> None:
    """Note every row read of the store (its keyset position and size) in ``events``, in order."""
    for name in ("iter_article_rows", "iter_article_csv_rows"):
        original = getattr(store, name)

        def recording(query: Any, batch_size: int = 500, original: Any = original) -> AsyncIterator[Any]:
            events.append(("read", (query.after, query.offset, query.limit)))
            return original(query, batch_size)  # type: ignore[no-any-return]

        setattr(store, name, recording)


def _reads(ctx: Any) -> ReadAhead[Any]:
    return ctx.extras["article-read-ahead"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("fmt", ["ndjson", "csv"])
async def test_a_walk_by_cursor_is_read_a_page_ahead_and_returns_every_row_once(
    writable, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A page's query holds the lookback floor to the second: a walk whose pages straddle a second boundary
    # (a loaded machine) asks for another floor than the one read ahead, and reads it again, rightly. The
    # clock stands still here so the test sees the read-ahead itself.
    frozen = utcnow()
    monkeypatch.setattr("server.articles.utcnow", lambda: frozen)
    ctx = writable.server.ctx
    events: list[tuple[str, Any]] = []
    _record_reads(ctx.articles, events)
    want = [a.id for a in sorted(writable.visible(), key=lambda a: (a.published_at, a.id), reverse=True)]
    pages: list[list[str]] = []
    cursor = None
    async with writable.server.client(writable.server.pro_key) as http:
        while True:
            events.append(("request", len(pages)))
            answer = await http.get("/api/v1/articles", params={"format": fmt, "limit": PAGE,
                                                                **({"cursor": cursor} if cursor else {})})
            answer.raise_for_status()
            pages.append(_ids(fmt, answer.content))
            cursor = answer.headers.get("X-Next-Cursor")
            if cursor is None:
                break
            await _reads(ctx).settle()
    assert [i for page in pages for i in page] == want
    # Each page's rows are read by a query that starts after the previous page's last row.
    starts = {n: [i for i, e in enumerate(events) if e[0] == "read" and e[1][0] is not None
                  and e[1][0][1] == pages[n - 1][-1] and e[1][2] == PAGE] for n in range(1, len(pages))}
    asked = {e[1]: i for i, e in enumerate(events) if e[0] == "request"}
    assert len(pages) >= 4
    assert all(index > asked[1] for index in starts[1]), "page 2 follows a first page: it is not read ahead"
    for n in range(2, len(pages)):
        assert starts[n] and starts[n][0] < asked[n], f"page {n + 1} was not read before it was asked for"
        assert len(starts[n]) == 1, f"page {n + 1} was read twice"


async def test_a_write_between_pages_is_seen_by_the_next_page(writable) -> None:
    ctx = writable.server.ctx
    visible = sorted(writable.visible(), key=lambda a: (a.published_at, a.id), reverse=True)
    async with writable.server.client(writable.server.pro_key) as http:
        first = await http.get("/api/v1/articles", params={"format": "ndjson", "limit": PAGE})
        second = await http.get("/api/v1/articles", params={"format": "ndjson", "limit": PAGE,
                                                              "cursor": first.headers["X-Next-Cursor"]})
        await _reads(ctx).settle()
        assert len(_reads(ctx)) == 1  # the third page, read ahead
        # An article inside the third page's span arrives after it was read ahead.
        inside = visible[2 * PAGE + PAGE // 2]
        newcomer = replace(next(a for batch in generate(1, utcnow(), seed=7) for a in batch),
                           id="00000000-0000-4000-8000-00000000abcd", published_at=inside.published_at,
                           is_archived=False)
        await ctx.articles.upsert_articles([newcomer])
        third = await http.get("/api/v1/articles", params={"format": "ndjson", "limit": PAGE,
                                                             "cursor": second.headers["X-Next-Cursor"]})
    assert newcomer.id in _ids("ndjson", third.content)
    assert len(_ids("ndjson", third.content)) == PAGE


async def test_a_first_page_asked_again_reads_nothing_ahead(writable) -> None:
    async with writable.server.client(writable.server.pro_key) as http:
        for _ in range(3):
            (await http.get("/api/v1/articles", params={"format": "ndjson", "limit": PAGE})).raise_for_status()
    assert len(_reads(writable.server.ctx)) == 0


async def test_another_query_does_not_take_a_read_meant_for_a_walk(writable) -> None:
    """The same cursor with other filters, fields or format reads its own rows."""
    async with writable.server.client(writable.server.pro_key) as http:
        first = await http.get("/api/v1/articles", params={"format": "ndjson", "limit": PAGE})
        second = await http.get("/api/v1/articles", params={"format": "ndjson", "limit": PAGE,
                                                              "cursor": first.headers["X-Next-Cursor"]})
        await _reads(writable.server.ctx).settle()
        cursor = second.headers["X-Next-Cursor"]
        sparse = await http.get("/api/v1/articles", params={"format": "ndjson", "limit": PAGE, "cursor": cursor,
                                                              "fields": "title"})
        whole = await http.get("/api/v1/articles", params={"format": "ndjson", "limit": PAGE, "cursor": cursor})
    assert all(set(orjson.loads(line)) == {"id", "title"} for line in sparse.content.splitlines())
    assert _ids("ndjson", sparse.content) == _ids("ndjson", whole.content)
    assert all(len(orjson.loads(line)) > 2 for line in whole.content.splitlines())


# --- the holder itself --------------------------------------------------------------------------


async def _value(value: int, delay: float = 0.0) -> int:
    await asyncio.sleep(delay)
    return value


async def _failing() -> int:
    raise RuntimeError("the store went away")


async def test_a_read_is_taken_once() -> None:
    reads: ReadAhead[int] = ReadAhead(2)
    reads.start("a", _value(1, 0.01))
    assert await reads.take("a") == 1
    assert await reads.take("a") is None
    assert await reads.take("never started") is None


async def test_the_oldest_read_leaves_first_and_is_cancelled() -> None:
    reads: ReadAhead[int] = ReadAhead(2)
    reads.start("a", _value(1, 10))
    held = list(reads._reads.values())
    reads.start("b", _value(2))
    reads.start("c", _value(3))
    await asyncio.sleep(0)
    assert len(reads) == 2 and held[0].cancelled()
    assert await reads.take("a") is None
    assert (await reads.take("b"), await reads.take("c")) == (2, 3)


async def test_a_failed_read_answers_none_and_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    reads: ReadAhead[int] = ReadAhead(2)
    reads.start("a", _failing())
    reads.start("b", _failing())
    await reads.settle()
    assert await reads.take("a") is None
    reads._drop("b")  # a failed read nobody takes: its error is retrieved, not reported by asyncio
    await asyncio.sleep(0)
    assert "exception was never retrieved" not in caplog.text


async def test_no_room_starts_nothing() -> None:
    reads: ReadAhead[int] = ReadAhead(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine never awaited would warn
        reads.start("a", _value(1))
    assert len(reads) == 0 and await reads.take("a") is None

