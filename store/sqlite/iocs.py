"""IOC records on the SQLite backend: one row per (type, value) with its stored API form."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import orjson

from store.base import IocStats, ioc_position, ioc_row_position, keyset_pages
from store.cache import NearMap
from store.codec import fold_iocs, from_doc, merge_ioc, revoked, to_doc
from store.decay import ladder_place, scores_at
from store.ioc_counters import ESTIMATE_CAP, CounterKey, countable, tally
from store.ports import IocStore
from store.query import IocQuery, status_clock
from store.records import RECENT_LINKS, Ioc, iso, utcnow
from store.sqlite import ioc_counters, queries, value_index
from store.sqlite.backend import SqliteStore
from store.sqlite.ioc_links import LinkRow, insert_links, linked_record, new_record, recent_links
from store.sqlite.part import SqlitePart, _json, _rows_in, _tuples
from store.sqlite.scores import completed_form, stored_form, with_columns

_LISTS_VERSION = "warninglists_version"
INLINE_ROWS = 200  # pages up to this size are read on the event loop's reader (see ``SqliteStore._point``)
COUNT_CACHE_SIZE = 256
_FORM_SLOT = "/*form*/"  # where a row page's statement takes its completed form (store.sqlite.scores.with_columns)
_IOC_COLUMNS = ("type", "value", "first_seen", "last_seen", "modified", "confidence", "feed_name",
                "source_category", "industries", "doc", "stix_id", "api_json", "valid_until", "revoked",
                "warninglisted", "score_place")


# A new record is inserted as the row after the last (its links are then appended to ``ioc_refs``, see
# store.sqlite.ioc_links); a known one is updated in place and keeps its rowid, which the value index
# (iocs_values) and the link relation refer to.
_INSERT_ROW = f"INSERT INTO iocs (rowid, {', '.join(_IOC_COLUMNS)}) VALUES (?, {', '.join('?' * len(_IOC_COLUMNS))})"
# An update sets only what a merge can change: SQLite rewrites the index entries of every column an UPDATE
# sets, changed or not, and the stix_id (made from the type and value) would cost a random page of its
# index per merged record.
_SET_AT = [n for n, c in enumerate(_IOC_COLUMNS) if c not in ("type", "value", "stix_id")]
_SET = ", ".join(f"{_IOC_COLUMNS[n]} = ?" for n in _SET_AT)
_UPDATE_ROW = f"UPDATE iocs SET {_SET} WHERE rowid = ?"
_REWRITE_ROW = f"UPDATE iocs SET {_SET} WHERE type = ? AND value = ?"
Held = dict[tuple[str, str], tuple[int, Ioc]]  # (type, value) -> (rowid, stored record)


def _ioc_row(i: Ioc) -> tuple[Any, ...]:
    until = i.valid_until  # computed from the record (store.decay): once for both of its columns
    return (i.type, i.value, iso(i.first_seen), iso(i.last_seen), iso(i.modified), i.confidence, i.feed_name,
            i.source_category, _json(i.industries), _json(to_doc(i)), i.stix_id, stored_form(i),
            iso(until), int(i.revoked), 1 if i.warninglisted else None, ladder_place(i.type, until, i.revoked))


def _set_row(i: Ioc) -> tuple[Any, ...]:
    """The values of ``_SET``, for an update of ``i``'s row."""
    row = _ioc_row(i)
    return tuple(row[n] for n in _SET_AT)


def _newest_first(q: IocQuery) -> str:
    """The capped count's order for a status filter: the records still active are mostly the recently
    changed ones, so walking the (type,) modified index newest first reaches the cap after about as many
    entries, where oldest first passes every expired record from the window's start (at a year of data,
    most of them). Only where that index gives the order (one type or none, no substring), else none."""
    return " ORDER BY modified DESC" if q.lifecycle and len(q.types) <= 1 and not q.value_contains else ""


def _held(db: sqlite3.Connection, keys: list[tuple[str, str]]) -> Held:
    """The stored records of ``keys`` ((type, value) pairs) with their rowids, read a type at a time by the
    primary key."""
    values: dict[str, list[str]] = {}
    for ioc_type, value in keys:
        values.setdefault(ioc_type, []).append(value)
    sql = "SELECT rowid, doc FROM iocs WHERE type = ? AND value IN ({marks})"
    return {(ioc_type, ioc.value): (rowid, ioc)
            for ioc_type, wanted in values.items()
            for rowid, doc in _rows_in(sql, wanted, (ioc_type,))(db)
            for ioc in (from_doc(Ioc, orjson.loads(doc)),)}


def _store(db: sqlite3.Connection, folded: dict[tuple[str, str], Ioc], stored: Held) -> None:
    """Write ``folded`` over the ``stored`` records, with their links and counters (in the caller's transaction)."""
    next_id = int(db.execute("SELECT coalesce(max(rowid), 0) + 1 FROM iocs").fetchone()[0])
    deltas: Counter[CounterKey] = Counter()
    links, inserts, updates = list[LinkRow](), list[tuple[Any, ...]](), list[tuple[Any, ...]]()
    for key, ioc in folded.items():
        if key in stored:
            rowid, held = stored[key]
            record = linked_record(db, rowid, merge_ioc(held, ioc), held, ioc)
            updates.append((*_set_row(record), rowid))
        else:
            rowid, held, next_id = next_id, None, next_id + 1
            record = new_record(rowid, ioc, links)
            inserts.append((rowid, *_ioc_row(record)))
        tally(deltas, held, record)
    insert_links(db, links)  # a batch's new links and rows each in one statement (a seeding writes mostly new)
    db.executemany(_INSERT_ROW, inserts)
    db.executemany(_UPDATE_ROW, updates)
    ioc_counters.apply(db, deltas)  # in the same transaction: the counters never disagree with the rows


def _rewrite(db: sqlite3.Connection, changes: list[tuple[Ioc, Ioc]]) -> None:
    """Write each (stored, changed) record in place with its counter move; the data version moves only when
    one did."""
    if not changes:
        return
    deltas: Counter[CounterKey] = Counter()
    for held, record in changes:
        tally(deltas, held, record)
    db.executemany(_REWRITE_ROW, [(*_set_row(record), record.type, record.value) for _, record in changes])
    ioc_counters.apply(db, deltas)
    db.execute("UPDATE meta SET value = value + 1 WHERE key = 'data_version'")


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
            _store(db, folded, _held(db, list(folded)))
            return len(incoming)

        return await self._run(lambda db: self._write(db, upsert, bump=True))

    async def replace_iocs(self, iocs: Iterable[Ioc]) -> int:
        folded = fold_iocs(iocs)

        def replace(db: sqlite3.Connection) -> int:  # one transaction: readers see the old set or the new
            db.execute("DELETE FROM iocs")
            db.execute("DELETE FROM ioc_refs")
            ioc_counters.clear(db)
            _store(db, folded, {})
            return len(folded)

        return await self._run(lambda db: self._write(db, replace, bump=True))

    async def revoke_ioc(self, ioc_type: str, value: str, reason: str, at: datetime) -> Ioc | None:
        def revoke(db: sqlite3.Connection) -> Ioc | None:
            found = _held(db, [(ioc_type, value)]).get((ioc_type, value))
            held = None if found is None else found[1]
            record = None if held is None else revoked(held, reason, at)
            if held is None or record is None or record is held:
                return held
            _rewrite(db, [(held, record)])
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

    def _select(self, db: sqlite3.Connection, q: IocQuery, columns: str) -> queries.Clause:
        """A page of ``columns`` in ``q``'s order, ``LIMIT ? OFFSET ?`` left open; in date_added order the
        selected columns follow the (date_added, type, value) the arms are merged by."""
        if q.added_order:
            return queries.added_select(q, columns)
        where, params = self._where(db, q, page=True)
        return f"SELECT {columns} FROM iocs WHERE {where} ORDER BY first_seen, type, value LIMIT ? OFFSET ?", params

    def _ioc_page(self, q: IocQuery, size: int) -> Callable[[sqlite3.Connection], list[Ioc]]:
        def fetch(db: sqlite3.Connection) -> list[Ioc]:
            sql, params = self._select(db, q, "doc")
            return [from_doc(Ioc, orjson.loads(r[-1])) for r in db.execute(sql, [*params, size, q.offset]).fetchall()]

        return fetch

    def iter_iocs(self, query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[Ioc]]:
        return keyset_pages(query, batch_size, lambda q, n: self._run(self._ioc_page(q, n)), ioc_position(query))

    def _ioc_row_page(self, q: IocQuery, size: int) -> Callable[[sqlite3.Connection], list[bytes]]:
        def fetch(db: sqlite3.Connection) -> list[bytes]:
            # The pre-encoded API form, completed in SQL with score and status from the stored ladder place
            # (store.sqlite.scores; the keyset position is read from the last one). Every row has both: the
            # list-form rebuild at open fills them for rows written before they existed (store/sqlite/listforms.py).
            form, first = completed_form(scores_at(status_clock(q)))
            template, params = self._select(db, q, _FORM_SLOT)
            sql = with_columns(template, _FORM_SLOT, form)
            return [row[-1] for row in _tuples(db, sql, [*first, *params, size, q.offset])]

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
            sql = f"SELECT count(*) FROM (SELECT 1 FROM iocs WHERE {where}{_newest_first(q)} LIMIT ?)"
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

    async def warninglists_version(self) -> str | None:
        row = await self._one("SELECT value FROM settings WHERE key = ?", (_LISTS_VERSION,))
        return None if row is None else str(row[0])

    async def set_warninglists_version(self, version: str) -> None:
        sql = "INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)"
        await self._run(lambda db: self._write(db, lambda d: d.execute(sql, (_LISTS_VERSION, version))))
