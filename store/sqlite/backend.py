"""SqliteStore: the embedded backend.

One connection, used from one worker thread, so every statement is serialised without locks in
Python; WAL lets other processes (a second server, the CLI) read while it writes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import shutil
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import orjson

from store.base import (
    ArticleRow,
    Conflict,
    IocStats,
    NotFound,
    QuotaExceeded,
    Store,
    StoreUnavailable,
    ioc_row_position,
    keyset_pages,
)
from store.cache import NearMap
from store.codec import fold_iocs, from_doc, merge_ioc, to_doc
from store.csvform import csv_line
from store.query import TIME_FIELDS, ArticleQuery, IocQuery
from store.records import ApiKey, Article, Ioc, Source, User, iso, parse_iso, parse_stored
from store.sqlite import listforms, queries
from store.sqlite.accounts import SqliteAccounts, revoke, user_of
from store.sqlite.schema import ADDED_COLUMNS, BACKFILL_STIX_IDS, LATE_SCHEMA, PRAGMAS, SCHEMA, STIX_ID_FUNCTION
from store.sqlite.usage import SqliteUsage
from store.stixids import object_id

T = TypeVar("T")
INLINE_ROWS = 200  # pages up to this size are read on the event loop's reader (see ``_point``)
COUNT_CACHE_SIZE = 256
MEMO_SIZE = 4096  # remembered point reads; an unknown key's miss is remembered too, so the map is bounded
_ARTICLE_COLUMNS = (
    "id", "title", "summary", "ai_summary", "canonical_url", "content_hash", "published_at", "fetched_at",
    "modified_at", "created_at", "source_name", "source_type", "source_tier", "category", "content_type",
    "severity_score", "rank_score", "has_iocs", "has_audio", "is_archived", "submission_type", "tech_tags",
    "industry_tags", "threat_actors", "technique_ids", "doc", "list_json", "csv_line",
)


def _migrate(db: sqlite3.Connection) -> None:
    """Bring a database made by an earlier release up to the schema: added columns, their indexes, and
    the STIX ids of IOC rows written before the column (idempotent: a second open finds nothing to do)."""
    for table, column, kind in ADDED_COLUMNS:
        if column not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
    db.executescript(LATE_SCHEMA)
    db.create_function(STIX_ID_FUNCTION, 2, object_id, deterministic=True)
    SqliteStore._write(db, lambda d: d.execute(BACKFILL_STIX_IDS))


def _regexp(pattern: str, value: str | None) -> bool:
    return value is not None and re.search(pattern, value) is not None


def _json(value: Any) -> bytes:
    return orjson.dumps(value, default=iso)


def _article_row(a: Article) -> tuple[Any, ...]:
    doc, listed = to_doc(a), a.list_form()
    lists = [_json(x) for x in (a.tech_tags, a.industry_tags, a.threat_actors, [t.id for t in a.mitre_techniques])]
    return (
        a.id, a.title, a.summary, a.ai_summary, a.canonical_url, a.content_hash, iso(a.published_at),
        iso(a.fetched_at), iso(a.modified_at), iso(a.created_at), a.source_name, a.source_type, a.source_tier,
        a.category, a.content_type, a.severity_score, a.rank_score, int(a.has_iocs), int(a.has_audio),
        int(a.is_archived), a.submission_type, *lists, _json(doc), orjson.dumps(listed), csv_line(listed),
    )


_IOC_COLUMNS = ("type", "value", "first_seen", "last_seen", "modified", "confidence", "feed_name",
                "source_category", "industries", "doc", "stix_id", "api_json")


def _ioc_row(i: Ioc) -> tuple[Any, ...]:
    return (i.type, i.value, iso(i.first_seen), iso(i.last_seen), iso(i.modified), i.confidence, i.feed_name,
            i.source_category, _json(i.industries), _json(to_doc(i)), i.stix_id, orjson.dumps(i.to_api()))


class SqliteStore(SqliteAccounts, SqliteUsage, Store):
    """Store on one SQLite file (WAL, FTS5 with the porter stemmer)."""

    name = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        # Told (rows done, total) while ``open`` re-encodes stored list forms of an older shape.
        self.on_rebuild: listforms.Progress | None = None
        # IOC counts by (data version, filters): reused while the data is unchanged.
        self._ioc_counts: NearMap[int] = NearMap(COUNT_CACHE_SIZE)
        # Point reads (the data version, a key with its user) remembered until the file's next commit.
        self._memo: dict[tuple[str, tuple[Any, ...]], Any] = {}
        self._memo_at = -1
        self._memo_checked = False

    # -- plumbing ----------------------------------------------------------------------------
    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._call, fn)

    async def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return await self._run(lambda db: db.execute(sql, params).fetchone())

    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return await self._run(lambda db: db.execute(sql, params).fetchall())

    async def _point(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """One indexed point read (key, user, data version) on the event loop's own read connection.

        Every authenticated request makes such reads; each takes microseconds, far less than a hop to the
        executor thread and back, so they run inline. WAL lets this reader see every committed write.
        """
        return self._read_one(sql, params)

    def _read_one(self, sql: str, params: Sequence[Any]) -> Any:
        return self._inline(lambda db: db.execute(sql, params).fetchone())

    def _remembered(self, sql: str, params: tuple[Any, ...], decode: Callable[[Any], T]) -> T:
        """``decode`` of a point read, remembered until any connection commits to the file.

        SQLite's ``PRAGMA data_version`` on the read connection changes after every commit by another
        connection: this process's writer and other processes (the CLI, workers) alike
        (sqlite.org/pragma.html#pragma_data_version). Checking it costs a fraction of the join it saves,
        and a deleted key, a new tier or a write of IOCs is seen by the very next request.
        """
        if not self._memo_checked:
            # Checked once per pass of the event loop: the reads of one request's uninterrupted run (its key,
            # then its data version) see the file as of one instant, as if read together.
            self._memo_checked = True
            asyncio.get_running_loop().call_soon(self._memo_recheck)
            version = self._inline(lambda db: db.execute("PRAGMA data_version").fetchone()[0])
            if version != self._memo_at or len(self._memo) >= MEMO_SIZE:
                self._memo, self._memo_at = {}, version
        key = (sql, params)
        if key not in self._memo:
            self._memo[key] = decode(self._read_one(sql, params))
        return self._memo[key]  # type: ignore[no-any-return]

    def _memo_recheck(self) -> None:
        self._memo_checked = False

    def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._db is None:
            raise StoreUnavailable("the SQLite store is not open")
        try:
            return fn(self._db)
        except sqlite3.OperationalError as exc:
            raise self._unavailable(exc) from exc

    def _unavailable(self, exc: sqlite3.OperationalError) -> StoreUnavailable:
        """The error as users should read it: a full disk often surfaces as "disk I/O error" (SQLite failing
        to create or grow its -wal and -shm files) rather than SQLITE_FULL, so the free space decides."""
        if getattr(exc, "sqlite_errorname", "").startswith("SQLITE_IOERR") and _disk_full(self.path.parent):
            return StoreUnavailable("SQLite: database or disk is full")
        return StoreUnavailable(f"SQLite: {exc}")

    def _connect(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.create_function("regexp", 2, _regexp, deterministic=True)
        for pragma in PRAGMAS:
            db.execute(pragma)
        db.executescript(SCHEMA)
        _migrate(db)
        listforms.rebuild(db, self.on_rebuild)
        self._db = db

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._pool, self._connect)
        except sqlite3.OperationalError as exc:
            raise self._unavailable(exc) from exc
        reader = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        reader.row_factory = sqlite3.Row
        reader.execute("PRAGMA busy_timeout=10000")
        reader.execute("PRAGMA query_only=ON")
        self._reader = reader

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._db is not None:
            db, self._db = self._db, None
            await asyncio.get_running_loop().run_in_executor(self._pool, db.close)
        self._pool.shutdown(wait=False)

    async def ping(self) -> dict[str, Any]:
        version = await self._run(lambda db: db.execute("select sqlite_version()").fetchone()[0])
        return {"backend": self.name, "path": str(self.path), "sqlite_version": version}

    @staticmethod
    def _write(db: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T], bump: bool = False) -> T:
        """Run ``fn`` in one transaction; ``bump`` increases the data version inside it."""
        db.execute("BEGIN IMMEDIATE")
        try:
            result = fn(db)
            if bump:
                db.execute("UPDATE meta SET value = value + 1 WHERE key = 'data_version'")
            db.execute("COMMIT")
            return result
        except BaseException:
            # SQLite rolls the transaction back itself on some errors (SQLITE_FULL among them: a full disk,
            # sqlite.org/lang_transaction.html "Response To Errors Within A Transaction"); a ROLLBACK then
            # would fail with "no transaction is active" and hide the real error.
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    async def data_version(self) -> int:
        return self._remembered("SELECT value FROM meta WHERE key='data_version'", (), lambda row: int(row[0]))

    # -- users and keys ----------------------------------------------------------------------
    async def create_user(self, user: User) -> User:
        def insert(db: sqlite3.Connection) -> None:
            db.execute("INSERT INTO users (id, email, tier, created_at, password_hash, unverified) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (user.id, user.email.lower(), user.tier, iso(user.created_at),
                                                     user.password_hash, int(user.unverified)))

        try:
            await self._run(lambda db: self._write(db, insert))
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"a user with e-mail {user.email!r} exists") from exc
        return user

    async def get_user(self, *, user_id: str | None = None, email: str | None = None) -> User:
        column, value = ("id", user_id) if user_id is not None else ("email", (email or "").lower())
        row = await self._point(f"SELECT * FROM users WHERE {column} = ?", (value,))
        if row is None:
            raise NotFound(f"no user with {column} {value!r}")
        return user_of(row)

    async def create_key(self, key: ApiKey, max_keys: int) -> ApiKey:
        def insert(db: sqlite3.Connection) -> None:
            count = db.execute("SELECT count(*) FROM api_keys WHERE user_id = ?", (key.user_id,)).fetchone()[0]
            if count >= max_keys:
                raise QuotaExceeded(f"this plan allows at most {max_keys} API keys")
            db.execute(
                f"INSERT INTO api_keys ({', '.join(_KEY_COLUMNS)}) VALUES ({', '.join('?' * len(_KEY_COLUMNS))})",
                (key.id, key.user_id, key.name, key.key_hash, key.prefix, _json(key.scopes).decode(),
                 iso(key.created_at), int(key.active), key.expires_at and iso(key.expires_at), None,
                 int(key.pending), None, None),
            )

        try:
            await self._run(lambda db: self._write(db, insert))
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"a key named {key.name!r} exists") from exc
        return key

    @staticmethod
    def _key(row: sqlite3.Row | dict[str, Any]) -> ApiKey:
        doc = dict(row)
        doc["scopes"] = orjson.loads(doc["scopes"])
        doc["active"] = bool(doc["active"])
        doc["pending"] = bool(doc.get("pending"))
        return from_doc(ApiKey, doc)

    async def key_by_hash(self, key_hash: str) -> ApiKey | None:
        row = await self._point("SELECT * FROM api_keys WHERE key_hash = ?1 OR previous_hash = ?1", (key_hash,))
        return None if row is None else self._key(row)

    async def key_with_user(self, key_hash: str) -> tuple[ApiKey, User] | None:
        # Every authenticated request asks; the answer is remembered until the next commit to the file.
        return self._remembered(_KEY_WITH_USER, (key_hash,), lambda row: None if row is None else _key_and_user(row))

    async def list_keys(self, user_id: str) -> list[ApiKey]:
        rows = await self._all(
            "SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, name", (user_id,))
        return [self._key(r) for r in rows]

    async def delete_key(self, user_id: str, name: str) -> None:
        def delete(db: sqlite3.Connection) -> int:
            row = db.execute("SELECT key_hash, previous_hash FROM api_keys WHERE user_id = ? AND name = ?",
                             (user_id, name)).fetchone()
            if row is None:
                return 0
            revoke(db, *row)
            return db.execute("DELETE FROM api_keys WHERE user_id = ? AND name = ?", (user_id, name)).rowcount

        if not await self._run(lambda db: self._write(db, delete)):
            raise NotFound(f"no key named {name!r}")

    async def set_key_active(self, user_id: str, name: str, active: bool) -> None:
        changed = await self._run(lambda db: self._write(db, lambda d: d.execute(
            "UPDATE api_keys SET active = ?, pending = CASE WHEN ? THEN 0 ELSE pending END "
            "WHERE user_id = ? AND name = ?", (int(active), int(active), user_id, name)).rowcount))
        if not changed:
            raise NotFound(f"no key named {name!r}")

    async def is_revoked(self, key_hash: str) -> bool:
        row = await self._point("SELECT 1 FROM revoked_keys WHERE key_hash = ?", (key_hash,))
        return row is not None

    # -- articles ----------------------------------------------------------------------------
    async def upsert_articles(self, articles: Sequence[Article]) -> int:
        if not articles:
            return 0
        marks = ", ".join("?" * len(_ARTICLE_COLUMNS))
        updates = ", ".join(f"{c} = excluded.{c}" for c in _ARTICLE_COLUMNS[1:])
        sql = f"INSERT INTO articles ({', '.join(_ARTICLE_COLUMNS)}) VALUES ({marks}) " \
              f"ON CONFLICT (id) DO UPDATE SET {updates} WHERE doc IS NOT excluded.doc"
        rows = [_article_row(a) for a in articles]

        def upsert(db: sqlite3.Connection) -> int:
            return sum(db.execute(sql, row).rowcount for row in rows)

        return await self._run(lambda db: self._write(db, upsert, bump=True))

    async def get_article(self, article_id: str) -> Article:
        row = await self._one("SELECT doc FROM articles WHERE id = ?",
                                                    (article_id,))
        if row is None:
            raise NotFound(f"no article {article_id!r}")
        return from_doc(Article, orjson.loads(row[0]))

    async def find_article(self, *, canonical_url: str | None = None,
                           content_hash: str | None = None) -> Article | None:
        column, value = ("canonical_url", canonical_url) if canonical_url else ("content_hash", content_hash)
        row = await self._one(f"SELECT doc FROM articles WHERE {column} = ? LIMIT 1",
                                                    (value,))
        return None if row is None else from_doc(Article, orjson.loads(row[0]))

    def _article_page(self, q: ArticleQuery, size: int) -> Callable[[sqlite3.Connection], list[Article]]:
        where, params = queries.article_where(q)
        sql = f"SELECT doc FROM articles WHERE {where} ORDER BY {queries.article_order(q)} LIMIT ? OFFSET ?"

        def fetch(db: sqlite3.Connection) -> list[Article]:
            rows = db.execute(sql, [*params, size, q.offset]).fetchall()
            return [from_doc(Article, orjson.loads(r[0])) for r in rows]

        return fetch

    def _row_page(self, q: ArticleQuery, size: int, column: str = "list_json",
                  encode: Callable[[dict[str, Any]], bytes] = orjson.dumps,
                  ) -> Callable[[sqlite3.Connection], list[ArticleRow]]:
        where, params = queries.article_where(q)
        # The pre-encoded form; the document only for rows written before the column existed.
        sql = (f"SELECT {q.sort_field}, id, {column}, CASE WHEN {column} IS NULL THEN doc END FROM articles "
               f"WHERE {where} ORDER BY {queries.article_order(q)} LIMIT ? OFFSET ?")
        timed = q.sort_field in TIME_FIELDS

        def fetch(db: sqlite3.Connection) -> list[ArticleRow]:
            out: list[ArticleRow] = []
            for value, row_id, encoded, doc in _tuples(db, sql, [*params, size, q.offset]):
                if encoded is None:
                    encoded = encode(from_doc(Article, orjson.loads(doc)).list_form())
                out.append(((parse_stored(value) if timed else value, row_id), encoded))
            return out

        return fetch

    def iter_articles(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[Article]]:
        return keyset_pages(query, batch_size, lambda q, n: self._run(self._article_page(q, n)),
                            lambda a: (getattr(a, query.sort_field), a.id))

    def iter_article_rows(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[ArticleRow]]:
        return keyset_pages(query, batch_size, lambda q, n: self._run(self._row_page(q, n)), lambda row: row[0])

    def iter_article_csv_rows(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[ArticleRow]]:
        return keyset_pages(query, batch_size, lambda q, n: self._run(self._row_page(q, n, "csv_line", csv_line)),
                            lambda row: row[0])

    async def count_articles(self, query: ArticleQuery, exact: bool) -> int:
        where, params = queries.article_where(dataclasses.replace(query, after=None))
        if exact:
            sql = f"SELECT count(*) FROM articles WHERE {where}"
        else:
            # A planned estimate: count at most 10,000 matches, then extrapolate nothing (a lower bound).
            sql = f"SELECT count(*) FROM (SELECT 1 FROM articles WHERE {where} LIMIT 10000)"
        row = await self._one(sql, params)
        return int(row[0])

    async def article_refs(self, ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        wanted = list(dict.fromkeys(ids))
        refs: dict[str, tuple[str, str, str]] = {}
        for start in range(0, len(wanted), 500):  # SQLite caps bound parameters per statement
            chunk = wanted[start:start + 500]
            rows = await self._all(
                f"SELECT id, title, json_extract(doc, '$.url'), source_name FROM articles "
                f"WHERE id IN ({', '.join('?' * len(chunk))})", chunk)
            refs.update({r[0]: (r[1], r[2], r[3]) for r in rows})
        return refs

    async def article_sources(self) -> list[tuple[str, str, int, int]]:
        rows = await self._all(
            "SELECT source_name, source_type, source_tier, count(*) FROM articles "
            "GROUP BY source_name, source_type, source_tier ORDER BY source_name")
        return [(r[0], r[1], int(r[2]), int(r[3])) for r in rows]

    # -- IOCs --------------------------------------------------------------------------------
    async def upsert_iocs(self, iocs: Iterable[Ioc]) -> int:
        incoming = list(iocs)
        if not incoming:
            return 0
        # Named columns: a migrated database has ``stix_id`` last, whatever order a new one would have.
        sql = f"INSERT OR REPLACE INTO iocs ({', '.join(_IOC_COLUMNS)}) VALUES ({', '.join('?' * len(_IOC_COLUMNS))})"

        def upsert(db: sqlite3.Connection) -> int:
            for ioc in incoming:
                row = db.execute("SELECT doc FROM iocs WHERE type = ? AND value = ?", (ioc.type, ioc.value)).fetchone()
                merged = ioc if row is None else merge_ioc(from_doc(Ioc, orjson.loads(row[0])), ioc)
                db.execute(sql, _ioc_row(merged))
            return len(incoming)

        return await self._run(lambda db: self._write(db, upsert, bump=True))

    async def replace_iocs(self, iocs: Iterable[Ioc]) -> int:
        records = list(fold_iocs(iocs).values())
        sql = f"INSERT INTO iocs ({', '.join(_IOC_COLUMNS)}) VALUES ({', '.join('?' * len(_IOC_COLUMNS))})"

        def replace(db: sqlite3.Connection) -> int:  # one transaction: readers see the old set or the new
            db.execute("DELETE FROM iocs")
            db.executemany(sql, (_ioc_row(ioc) for ioc in records))
            return len(records)

        return await self._run(lambda db: self._write(db, replace, bump=True))

    def _ioc_page(self, q: IocQuery, size: int) -> Callable[[sqlite3.Connection], list[Ioc]]:
        where, params = queries.ioc_where(q)
        sql = f"SELECT doc FROM iocs WHERE {where} ORDER BY first_seen, type, value LIMIT ? OFFSET ?"
        return lambda db: [from_doc(Ioc, orjson.loads(r[0]))
                           for r in db.execute(sql, [*params, size, q.offset]).fetchall()]

    def iter_iocs(self, query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[Ioc]]:
        return keyset_pages(query, batch_size, lambda q, n: self._run(self._ioc_page(q, n)),
                            lambda i: (i.first_seen, i.type, i.value))

    def _ioc_row_page(self, q: IocQuery, size: int) -> Callable[[sqlite3.Connection], list[bytes]]:
        where, params = queries.ioc_where(q)
        # The pre-encoded API form alone (the keyset position is read from the last one); the document
        # only for rows written before the column existed.
        sql = (f"SELECT api_json, CASE WHEN api_json IS NULL THEN doc END FROM iocs "
               f"WHERE {where} ORDER BY first_seen, type, value LIMIT ? OFFSET ?")

        def fetch(db: sqlite3.Connection) -> list[bytes]:
            return [encoded if encoded is not None else orjson.dumps(from_doc(Ioc, orjson.loads(doc)).to_api())
                    for encoded, doc in _tuples(db, sql, [*params, size, q.offset])]

        return fetch

    def iter_ioc_rows(self, query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[bytes]]:
        return keyset_pages(query, batch_size, self._ioc_rows, ioc_row_position)

    async def _ioc_rows(self, q: IocQuery, size: int) -> list[bytes]:
        fetch = self._ioc_row_page(q, size)
        if size <= INLINE_ROWS and self._reader is not None:
            # A small page by index reads in well under a millisecond: inline, like the point reads.
            return self._inline(fetch)
        return await self._run(fetch)

    def _inline(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._reader is None:
            raise StoreUnavailable("the SQLite store is not open")
        try:
            return fn(self._reader)
        except sqlite3.OperationalError as exc:
            raise self._unavailable(exc) from exc

    async def count_iocs(self, query: IocQuery) -> int:
        where, params = queries.ioc_where(dataclasses.replace(query, after=None))
        key = (await self.data_version(), where, tuple(params))
        held = self._ioc_counts.get(key)
        if held is not None:
            return held  # the same filters on unchanged data: a polling SIEM's every request
        row = await self._one(f"SELECT count(*) FROM iocs WHERE {where}", params)
        self._ioc_counts.put(key, int(row[0]))
        return int(row[0])

    async def get_ioc(self, ioc_type: str, value: str) -> Ioc | None:
        row = await self._one("SELECT doc FROM iocs WHERE type = ? AND value = ?",
                                                    (ioc_type, value))
        return None if row is None else from_doc(Ioc, orjson.loads(row[0]))

    async def ioc_stats(self, since: datetime, top: int = 10) -> IocStats:
        return await self._run(lambda db: _stats(db, iso(since), top))

    # -- sources -----------------------------------------------------------------------------
    async def upsert_source(self, source: Source) -> None:
        row = (source.name, _json(to_doc(source)))
        await self._run(lambda db: self._write(db, lambda d: d.execute(
            "INSERT OR REPLACE INTO sources VALUES (?, ?)", row)))

    async def list_sources(self) -> list[Source]:
        rows = await self._all("SELECT doc FROM sources ORDER BY name")
        return [from_doc(Source, orjson.loads(r[0])) for r in rows]


def _stats(db: sqlite3.Connection, since: str, top: int) -> IocStats:
    def grouped(column: str) -> dict[str, int]:
        rows = db.execute(f"SELECT {column}, count(*) FROM iocs WHERE modified >= ? GROUP BY {column} "
                          f"ORDER BY {column}", (since,)).fetchall()
        return {r[0]: int(r[1]) for r in rows}

    total = db.execute("SELECT count(*) FROM iocs WHERE modified >= ?", (since,)).fetchone()[0]
    sources = db.execute(
        "SELECT s.value, count(*) AS n FROM iocs, json_each(json_extract(iocs.doc, '$.sources')) AS s "
        "WHERE modified >= ? GROUP BY s.value ORDER BY n DESC, s.value LIMIT ?", (since, top)).fetchall()
    hourly = db.execute("SELECT substr(modified, 1, 13) AS hour, count(*) FROM iocs WHERE modified >= ? "
                        "GROUP BY hour ORDER BY hour", (since,)).fetchall()
    return IocStats(total=int(total), by_type=grouped("type"), by_confidence=grouped("confidence"),
                    by_category=grouped("source_category"), top_sources=[(r[0], int(r[1])) for r in sources],
                    hourly=[(r[0], int(r[1])) for r in hourly])


_KEY_COLUMNS = ("id", "user_id", "name", "key_hash", "prefix", "scopes", "created_at", "active", "expires_at",
                "last_used_at", "pending", "previous_hash", "previous_expires_at")
_KEY_WITH_USER = (f"SELECT {', '.join('k.' + c for c in _KEY_COLUMNS)}, u.email, u.tier, u.created_at "
                  "FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?1 OR k.previous_hash = ?1")


def _disk_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < 64 * 1024  # less than a few pages: nothing more can be written
    except OSError:
        return False


def _tuples(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """``fetchall`` as plain tuples: the connections make ``sqlite3.Row`` objects (named columns for the
    account reads), which cost a page of stored forms more than its read
    (BENCHMARKS.md, "Row pages are fetched as plain tuples")."""
    cursor = db.cursor()
    cursor.row_factory = None
    return cursor.execute(sql, params).fetchall()


def _key_and_user(row: sqlite3.Row) -> tuple[ApiKey, User]:
    n = len(_KEY_COLUMNS)
    key = SqliteStore._key(dict(zip(_KEY_COLUMNS, row[:n], strict=True)))
    email, tier, created_at = row[n:]
    return key, User(key.user_id, email, tier, parse_iso(created_at))

