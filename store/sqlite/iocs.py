"""IOC records on the SQLite backend: one row per (type, value) with its stored API form."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import orjson

from store.base import IocStats, ioc_row_position, keyset_pages
from store.cache import NearMap
from store.codec import fold_iocs, from_doc, merge_ioc, revoked, to_doc
from store.decay import scores_at
from store.ioc_counters import ESTIMATE_CAP, CounterKey, countable, tally
from store.ports import IocStore
from store.query import IocQuery, status_clock
from store.records import RECENT_LINKS, Ioc, iso, utcnow
from store.sqlite import ioc_counters, queries, value_index
from store.sqlite.backend import SqliteStore
from store.sqlite.ioc_links import LinkRow, insert_links, linked_record, new_record, recent_links
from store.sqlite.part import SqlitePart, _json, _rows_in, _tuples

INLINE_ROWS = 200  # pages up to this size are read on the event loop's reader (see ``SqliteStore._point``)
COUNT_CACHE_SIZE = 256
_IOC_COLUMNS = ("type", "value", "first_seen", "last_seen", "modified", "confidence", "feed_name",
                "source_category", "industries", "doc", "stix_id", "api_json", "valid_until", "revoked")


# Insert, or update in place: the row keeps its rowid, which the value index (iocs_values) refers to.
_UPSERT = (f"INSERT INTO iocs ({', '.join(_IOC_COLUMNS)}) VALUES ({', '.join('?' * len(_IOC_COLUMNS))}) "
           f"ON CONFLICT (type, value) DO UPDATE SET "
           + ", ".join(f"{c} = excluded.{c}" for c in _IOC_COLUMNS[2:]))


def _ioc_row(i: Ioc) -> tuple[Any, ...]:
    return (i.type, i.value, iso(i.first_seen), iso(i.last_seen), iso(i.modified), i.confidence, i.feed_name,
            i.source_category, _json(i.industries), _json(to_doc(i)), i.stix_id, orjson.dumps(i.stored_api()),
            iso(i.valid_until), int(i.revoked))


def _held(db: sqlite3.Connection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], Ioc]:
    """The stored records of ``keys`` ((type, value) pairs), read a type at a time by the primary key."""
    values: dict[str, list[str]] = {}
    for ioc_type, value in keys:
        values.setdefault(ioc_type, []).append(value)
    sql = "SELECT type, doc FROM iocs WHERE type = ? AND value IN ({marks})"
    return {(t, ioc.value): ioc
            for ioc_type, wanted in values.items()
            for t, doc in _rows_in(sql, wanted, (ioc_type,))(db)
            for ioc in (from_doc(Ioc, orjson.loads(doc)),)}


class SqliteIocs(SqlitePart, IocStore):
    """IOC records in the ``iocs`` table."""

    def __init__(self, conn: SqliteStore) -> None:
        super().__init__(conn)
        # IOC counts by (data version, filters): reused while the data is unchanged.
        self._ioc_counts: NearMap[int] = NearMap(COUNT_CACHE_SIZE)
        self._rarity = value_index.Rarity()

    async def upsert_iocs(self, iocs: Iterable[Ioc]) -> int:
        incoming = list(iocs)
        if not incoming:
            return 0

        def upsert(db: sqlite3.Connection) -> int:
            folded = fold_iocs(incoming)
            stored = _held(db, list(folded))
            deltas: Counter[CounterKey] = Counter()
            rows, links = [], list[LinkRow]()
            for key, ioc in folded.items():
                held = stored.get(key)
                record = new_record(ioc, links) if held is None else linked_record(db, merge_ioc(held, ioc), held, ioc)
                rows.append(_ioc_row(record))
                tally(deltas, held, record)
            # A batch's new links and rows each in one statement (a seeding writes mostly new records).
            insert_links(db, links)
            db.executemany(_UPSERT, rows)
            ioc_counters.apply(db, deltas)  # in the same transaction: the counters never disagree with the rows
            return len(incoming)

        return await self._run(lambda db: self._write(db, upsert, bump=True))

    async def replace_iocs(self, iocs: Iterable[Ioc]) -> int:
        records = list(fold_iocs(iocs).values())

        def replace(db: sqlite3.Connection) -> int:  # one transaction: readers see the old set or the new
            db.execute("DELETE FROM iocs")
            db.execute("DELETE FROM ioc_links")
            ioc_counters.clear(db)
            deltas: Counter[CounterKey] = Counter()
            rows, links = [], list[LinkRow]()
            for ioc in records:
                record = new_record(ioc, links)
                rows.append(_ioc_row(record))
                tally(deltas, None, record)
            insert_links(db, links)
            db.executemany(_UPSERT, rows)
            ioc_counters.apply(db, deltas)
            return len(records)

        return await self._run(lambda db: self._write(db, replace, bump=True))

    async def revoke_ioc(self, ioc_type: str, value: str, reason: str, at: datetime) -> Ioc | None:
        def revoke(db: sqlite3.Connection) -> Ioc | None:
            held = _held(db, [(ioc_type, value)]).get((ioc_type, value))
            record = None if held is None else revoked(held, reason, at)
            if held is None or record is None or record is held:
                return held
            db.execute(_UPSERT, _ioc_row(record))
            deltas: Counter[CounterKey] = Counter()
            tally(deltas, held, record)
            ioc_counters.apply(db, deltas)
            db.execute("UPDATE meta SET value = value + 1 WHERE key = 'data_version'")  # only when it changed
            return record

        return await self._run(lambda db: self._write(db, revoke))

    async def ioc_links(self, ioc_type: str, value: str, kind: str, limit: int = RECENT_LINKS) -> list[str]:
        return await self._run(lambda db: recent_links(db, ioc_type, value, kind, limit))

    def _where(self, db: sqlite3.Connection, q: IocQuery, page: bool = False) -> queries.Clause:
        """``q``'s clause; a page walks its order's index unless ``since`` is recent (queries.walks_order).
        A substring goes through the trigram index by its rarest trigrams (value_index.Rarity)."""
        needle = q.value_contains
        match = (self._rarity.match(db, needle) if needle is not None and self._conn.value_index
                 and queries.by_trigrams(q) else None)
        return queries.ioc_where(q, page and queries.walks_order(q, utcnow()), match)

    def _ioc_page(self, q: IocQuery, size: int) -> Callable[[sqlite3.Connection], list[Ioc]]:
        def fetch(db: sqlite3.Connection) -> list[Ioc]:
            where, params = self._where(db, q, page=True)
            sql = f"SELECT doc FROM iocs WHERE {where} ORDER BY first_seen, type, value LIMIT ? OFFSET ?"
            return [from_doc(Ioc, orjson.loads(r[0])) for r in db.execute(sql, [*params, size, q.offset]).fetchall()]

        return fetch

    def iter_iocs(self, query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[Ioc]]:
        return keyset_pages(query, batch_size, lambda q, n: self._run(self._ioc_page(q, n)),
                            lambda i: (i.first_seen, i.type, i.value))

    def _ioc_row_page(self, q: IocQuery, size: int) -> Callable[[sqlite3.Connection], list[bytes]]:
        def fetch(db: sqlite3.Connection) -> list[bytes]:
            where, params = self._where(db, q, page=True)
            # The pre-encoded API form, completed with score and status from the stored valid_until (the
            # keyset position is read from the last one). Every row has both: the list-form rebuild at open
            # fills them for rows written before they existed (store/sqlite/listforms.py).
            sql = (f"SELECT api_json, type, valid_until, revoked, modified FROM iocs "
                   f"WHERE {where} ORDER BY first_seen, type, value LIMIT ? OFFSET ?")
            return scores_at(status_clock(q)).complete(_tuples(db, sql, [*params, size, q.offset]))

        return fetch

    def iter_ioc_rows(self, query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[bytes]]:
        return keyset_pages(query, batch_size, self._ioc_rows, ioc_row_position)

    async def _ioc_rows(self, q: IocQuery, size: int) -> list[bytes]:
        fetch = self._ioc_row_page(q, size)
        if size <= INLINE_ROWS and self._reader is not None:
            # A small page by index reads in well under a millisecond: inline, like the point reads.
            return self._inline(fetch)
        return await self._run(fetch)

    async def count_iocs(self, query: IocQuery) -> int:
        q = dataclasses.replace(query, after=None, offset=0, limit=0)
        key = (await self.data_version(), q)
        held = self._ioc_counts.get(key)
        if held is not None:
            return held  # the same filters on unchanged data: a polling SIEM's every request

        def count(db: sqlite3.Connection) -> int:
            where, params = self._where(db, q)
            return int(db.execute(f"SELECT count(*) FROM iocs WHERE {where}", params).fetchone()[0])

        n = await self._run(count)
        self._ioc_counts.put(key, n)
        return n

    async def estimate_iocs(self, query: IocQuery, cap: int = ESTIMATE_CAP) -> tuple[int, bool]:
        q = dataclasses.replace(query, after=None, offset=0)
        if countable(q):
            return await self._run(lambda db: ioc_counters.count(db, q)), True

        def capped(db: sqlite3.Connection) -> int:
            where, params = self._where(db, q)
            sql = f"SELECT count(*) FROM (SELECT 1 FROM iocs WHERE {where} LIMIT ?)"
            return int(db.execute(sql, [*params, cap]).fetchone()[0])

        n = await self._run(capped)
        return n, n < cap

    async def get_ioc(self, ioc_type: str, value: str) -> Ioc | None:
        row = await self._one("SELECT doc FROM iocs WHERE type = ? AND value = ?",
                                                    (ioc_type, value))
        return None if row is None else from_doc(Ioc, orjson.loads(row[0]))

    async def get_iocs(self, ioc_type: str, values: Sequence[str]) -> dict[str, Ioc]:
        rows = await self._rows_in("SELECT value, doc FROM iocs WHERE type = ? AND value IN ({marks})", values,
                                   (ioc_type,))
        return {r[0]: from_doc(Ioc, orjson.loads(r[1])) for r in rows}

    async def ioc_stats(self, since: datetime, top: int = 10) -> IocStats:
        return await self._run(lambda db: ioc_counters.stats(db, since, top))
