"""Both backends answer the same rows for every format from the same records, and SQLite's stored list
forms (articles) and API forms (IOC records) follow the record shape's version, so a stored
form never drifts from what the other backend encodes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
from conformance.factories import article, ioc
from mongo_support import backend_stores, server_backends

from exporters.articles import CSV_COLUMNS, csv_line
from store.query import ArticleQuery, IocQuery
from store.records import LIST_FORM_VERSION
from store.sqlite import SqliteArticles, SqliteStore, sqlite_stores
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
        stores = backend_stores(backend) or sqlite_stores(tmp_path / "same.sqlite3")
        await stores.open()
        try:
            await stores.articles.upsert_articles(records)
            answers[backend] = {fmt: await _rows(stores.articles, fmt) for fmt in ("json", "ndjson", "csv")}
            everything = ArticleQuery(limit=1000, include_archived=True)
            stored = [line async for batch in stores.articles.iter_article_csv_rows(everything) for _, line in batch]
            assert stored == answers[backend]["csv"], backend  # the stored CSV line is the list form's
        finally:
            await stores.close()
    first = next(iter(answers.values()))
    assert len(first["json"]) == 40 and CSV_COLUMNS and len(answers) >= 2
    for backend, formats in answers.items():
        assert formats == first, backend


async def test_an_older_stored_form_is_rebuilt_at_open(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    stores = sqlite_stores(path)
    await stores.open()
    await stores.articles.upsert_articles([article(n) for n in range(5)])
    await stores.close()
    with sqlite3.connect(path) as db:  # as a release with another list shape left it
        db.execute("UPDATE articles SET list_json = ?, csv_line = ?", (orjson.dumps({"stale": True}), b"stale\r\n"))
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (LIST_FORM_VERSION - 1, META_KEY))
    seen: list[tuple[int, int]] = []
    conn = SqliteStore(path)
    conn.on_rebuild = lambda done, total: seen.append((done, total))
    await conn.open()
    store = SqliteArticles(conn)
    try:
        rows = await _rows(store, "json")
        assert rows and all(b"stale" not in row for row in rows)
        assert [orjson.loads(r)["id"] for r in rows] == [a.id for a in await store.all_articles(
            ArticleQuery(limit=1000, include_archived=True))]
        assert seen == [(5, 10), (10, 10)]  # each article's list form, then its CSV line
        csv_rows = [line async for batch in store.iter_article_csv_rows(ArticleQuery(limit=1000, include_archived=True))
                    for _, line in batch]
        assert csv_rows == await _rows(store, "csv")
    finally:
        await conn.close()
    conn = SqliteStore(path)  # a second open finds nothing to do
    conn.on_rebuild = lambda done, total: seen.append((done, total))
    await conn.open()
    await conn.close()
    assert seen == [(5, 10), (10, 10)]


async def _ioc_rows(store) -> list[bytes]:  # type: ignore[no-untyped-def]
    return [encoded async for batch in store.iter_ioc_rows(IocQuery(limit=1000)) for encoded in batch]


async def test_every_backend_returns_the_same_ioc_rows(tmp_path: Path) -> None:
    records = [ioc(f"c2-{n}.bad-host.net", article_ids=[str(n)], cves=["CVE-2025-0001"]) for n in range(30)]
    answers = {}
    for param in server_backends():
        backend = param.values[0]
        stores = backend_stores(backend) or sqlite_stores(tmp_path / "iocs.sqlite3")
        await stores.open()
        try:
            await stores.iocs.upsert_iocs(records)
            answers[backend] = await _ioc_rows(stores.iocs)
            decoded = [orjson.dumps(record.to_api()) for record in await stores.iocs.all_iocs(IocQuery(limit=1000))]
            assert answers[backend] == decoded, backend  # the stored form is the record's API form
        finally:
            await stores.close()
    first = next(iter(answers.values()))
    assert len(first) == 30 and len(answers) >= 2 and all(rows == first for rows in answers.values())


async def test_ioc_api_forms_of_an_older_version_or_missing_are_rebuilt_at_open(tmp_path: Path) -> None:
    path = tmp_path / "old-iocs.sqlite3"
    stores = sqlite_stores(path)
    await stores.open()
    await stores.iocs.upsert_iocs([ioc(f"c2-{n}.bad-host.net") for n in range(4)])
    await stores.close()
    with sqlite3.connect(path) as db:  # one row as a release with another API shape left it, one from before
        db.execute("UPDATE iocs SET api_json = ? WHERE value = 'c2-0.bad-host.net'", (b'{"stale":true}',))
        db.execute("UPDATE iocs SET api_json = NULL WHERE value = 'c2-1.bad-host.net'")
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (LIST_FORM_VERSION - 1, META_KEY))
    stores = sqlite_stores(path)
    await stores.open()
    try:
        rows = await _ioc_rows(stores.iocs)
        assert len(rows) == 4 and all(b"stale" not in row and orjson.loads(row)["stix_id"] for row in rows)
    finally:
        await stores.close()
