"""Both backends answer the same rows for every format from the same records, and SQLite's stored list
forms follow the record shape's version (issue 13, "A hazard between the backends")."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
from conformance.factories import article
from mongo_support import backend_store, server_backends

from exporters.articles import CSV_COLUMNS, csv_line
from store.query import ArticleQuery
from store.records import LIST_FORM_VERSION
from store.sqlite import SqliteStore
from store.sqlite.listforms import META_KEY


async def _rows(store, fmt: str) -> list[bytes]:  # type: ignore[no-untyped-def]
    out: list[bytes] = []
    async for batch in store.iter_article_rows(ArticleQuery(limit=1000, include_archived=True)):
        out += [encoded for _, encoded in batch]
    if fmt == "csv":
        return [csv_line(orjson.loads(row)) for row in out]
    return out


async def test_every_backend_returns_the_same_rows_in_every_format(tmp_path: Path) -> None:
    records = [article(n) for n in range(40)]
    answers = {}
    for param in server_backends():
        backend = param.values[0]
        store = backend_store(backend) or SqliteStore(tmp_path / "same.sqlite3")
        await store.open()
        try:
            await store.upsert_articles(records)
            answers[backend] = {fmt: await _rows(store, fmt) for fmt in ("json", "ndjson", "csv")}
        finally:
            await store.close()
    first = next(iter(answers.values()))
    assert len(first["json"]) == 40 and CSV_COLUMNS and len(answers) >= 2
    for backend, formats in answers.items():
        assert formats == first, backend


async def test_an_older_stored_form_is_rebuilt_at_open(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    store = SqliteStore(path)
    await store.open()
    await store.upsert_articles([article(n) for n in range(5)])
    await store.close()
    with sqlite3.connect(path) as db:  # as a release with another list shape left it
        db.execute("UPDATE articles SET list_json = ?", (orjson.dumps({"stale": True}),))
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (LIST_FORM_VERSION - 1, META_KEY))
    seen: list[tuple[int, int]] = []
    store = SqliteStore(path)
    store.on_rebuild = lambda done, total: seen.append((done, total))
    await store.open()
    try:
        rows = await _rows(store, "json")
        assert rows and all(b"stale" not in row for row in rows)
        assert [orjson.loads(r)["id"] for r in rows] == [a.id for a in await store.all_articles(
            ArticleQuery(limit=1000, include_archived=True))]
        assert seen == [(5, 5)]
    finally:
        await store.close()
    store = SqliteStore(path)  # a second open finds nothing to do
    store.on_rebuild = lambda done, total: seen.append((done, total))
    await store.open()
    await store.close()
    assert seen == [(5, 5)]
