"""What each concern of the SQLite backend reads and writes through: the shared ``SqliteStore``."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import orjson

from store.records import iso
from store.sqlite.backend import SqliteStore

T = TypeVar("T")


def _json(value: Any) -> bytes:
    return orjson.dumps(value, default=iso)


def _tuples(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """``fetchall`` as plain tuples: the connections make ``sqlite3.Row`` objects (named columns for the
    account reads), which cost a page of stored forms more than its read
    (BENCHMARKS.md, "Row pages are fetched as plain tuples")."""
    cursor = db.cursor()
    cursor.row_factory = None
    return cursor.execute(sql, params).fetchall()


# SQLite caps the parameters one statement binds (999 before 3.32): lists of keys are read in chunks.
IN_CHUNK = 500


def _rows_in(sql: str, keys: Sequence[Any], head: Sequence[Any]) -> Callable[[sqlite3.Connection], list[Any]]:
    def read(db: sqlite3.Connection) -> list[Any]:
        rows: list[Any] = []
        for start in range(0, len(keys), IN_CHUNK):
            chunk = keys[start:start + IN_CHUNK]
            rows += _tuples(db, sql.format(marks=", ".join("?" * len(chunk))), [*head, *chunk])
        return rows

    return read


class SqlitePart:
    """One concern's view of the shared connection: the same plumbing, method for method."""

    def __init__(self, conn: SqliteStore) -> None:
        self._conn = conn

    @property
    def _reader(self) -> sqlite3.Connection | None:
        return self._conn._reader

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await self._conn._run(fn)

    async def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return await self._conn._one(sql, params)

    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return await self._conn._all(sql, params)

    async def _point(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return await self._conn._point(sql, params)

    def _remembered(self, sql: str, params: tuple[Any, ...], decode: Callable[[Any], T]) -> T:
        return self._conn._remembered(sql, params, decode)

    async def _rows_in(self, sql: str, keys: Iterable[Any], head: Sequence[Any] = ()) -> list[Any]:
        """The rows of ``sql`` for every chunk of the distinct ``keys``, in one call (none for no keys):
        ``{marks}`` in ``sql`` is a chunk's placeholders, bound after ``head``. Rows are plain tuples."""
        wanted = list(dict.fromkeys(keys))
        return await self._run(_rows_in(sql, wanted, head)) if wanted else []

    def _inline(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return self._conn._inline(fn)

    _write = staticmethod(SqliteStore._write)

    async def data_version(self) -> int:
        return await self._conn.data_version()
