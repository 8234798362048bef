"""SqliteStore: the embedded backend's connection, which its concerns (``SqliteArticles``, ``SqliteIocs``,
``SqliteSources``, ``SqliteAccounts``) share.

One connection, used from one worker thread, so every statement is serialised without locks in
Python; WAL lets other processes (a second server, the CLI) read while it writes.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from store.base import StoreUnavailable
from store.ports import Lifecycle
from store.sqlite import ioc_counters, ioc_links, listforms, value_index
from store.sqlite.schema import ADDED_COLUMNS, BACKFILL_STIX_IDS, LATE_SCHEMA, PRAGMAS, SCHEMA, STIX_ID_FUNCTION
from store.stixids import object_id

T = TypeVar("T")
BUMP_VERSION = "UPDATE meta SET value = value + 1 WHERE key = 'data_version'"
# The writing connection's page cache during a bulk write (``SqliteStore.bulk``), MiB: a seed's random inserts
# into the record and link indexes (the (type, value) key, stix_id, ioc_refs) then find their pages in memory
# instead of reading them again each batch, once the indexes outgrow the 16 MiB of PRAGMAS.
BULK_CACHE_MIB = 256
MEMO_SIZE = 4096  # remembered point reads; an unknown key's miss is remembered too, so the map is bounded


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


class SqliteStore(Lifecycle):
    """One SQLite file (WAL, FTS5 with the porter stemmer): its connections, schema and data version."""

    name = "sqlite"

    def __init__(self, path: Path, bulk_cache_mib: int = BULK_CACHE_MIB) -> None:
        self.path = Path(path)
        self.bulk_cache_mib = bulk_cache_mib
        self._db: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        # Told (rows done, total) while ``open`` re-encodes stored list forms of an older shape.
        self.on_rebuild: listforms.Progress | None = None
        # Point reads (the data version, a key with its user) remembered until the file's next commit.
        self._memo: dict[tuple[str, tuple[Any, ...]], Any] = {}
        self._memo_at = -1
        self._memo_checked = False
        # Whether IOC substring searches use the trigram index (store.sqlite.value_index); set by ``open``.
        self.value_index = False

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

    def _inline(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._reader is None:
            raise StoreUnavailable("the SQLite store is not open")
        try:
            return fn(self._reader)
        except sqlite3.OperationalError as exc:
            raise self._unavailable(exc) from exc

    def _connect(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.row_factory = sqlite3.Row
        db.create_function("regexp", 2, _regexp, deterministic=True)
        for pragma in PRAGMAS:
            db.execute(pragma)
        db.executescript(SCHEMA)
        _migrate(db)
        ioc_links.migrate(db)
        ioc_counters.migrate(db)
        self.value_index = value_index.ensure(db)
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

    @asynccontextmanager
    async def bulk(self) -> AsyncIterator[None]:
        """The writer's page cache at ``bulk_cache_mib`` inside, back to its bound after (SQLite frees the
        pages over it): the serving connections keep their bound, a seed's writer has room."""
        usual = await self._run(lambda db: db.execute("PRAGMA cache_size").fetchone()[0])
        await self._run(lambda db: db.execute(f"PRAGMA cache_size=-{self.bulk_cache_mib * 1024}"))
        try:
            yield
        finally:
            await self._run(lambda db: db.execute(f"PRAGMA cache_size={int(usual)}"))

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
                db.execute(BUMP_VERSION)
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


def _disk_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < 64 * 1024  # less than a few pages: nothing more can be written
    except OSError:
        return False
