"""The IOC counters on SQLite (``ioc_day_counts``, ``ioc_month_counts``, ``ioc_day_sources``, ``ioc_hour_counts``; see
``store.ioc_counters``): written in the transaction of every IOC write, read by the stats and list totals.

Databases from before the counters get them once at open (``migrate``), in one pass over the records;
databases from before the month and hour counters get them the same way.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections import Counter
from datetime import datetime
from typing import Any

import orjson

from store.base import IocStats
from store.codec import from_doc
from store.ioc_counters import (
    DAY,
    HOUR,
    HOUR_GROUP,
    HOUR_SOURCE,
    MONTH,
    SOURCE,
    CounterKey,
    changed,
    combine,
    counter_span,
    first_whole_hour,
    tally,
)
from store.query import IocQuery
from store.records import Ioc, iso
from store.sqlite import queries

_ADD = " ON CONFLICT DO UPDATE SET n = n + excluded.n"
_APPLY = {
    DAY: "INSERT INTO ioc_day_counts (day, type, confidence, category, n) VALUES (?, ?, ?, ?, ?)" + _ADD,
    SOURCE: "INSERT INTO ioc_day_sources (day, source, n) VALUES (?, ?, ?)" + _ADD,
    HOUR: "INSERT INTO ioc_hour_counts (hour, n) VALUES (?, ?)" + _ADD,
    MONTH: "INSERT INTO ioc_month_counts (month, type, confidence, category, n) VALUES (?, ?, ?, ?, ?)" + _ADD,
    HOUR_GROUP: "INSERT INTO ioc_hour_groups (hour, type, confidence, category, n) VALUES (?, ?, ?, ?, ?)" + _ADD,
    HOUR_SOURCE: "INSERT INTO ioc_hour_sources (hour, source, n) VALUES (?, ?, ?)" + _ADD,
}
_GROUPS = "SELECT type, confidence, category, sum(n) FROM {table} WHERE {where} GROUP BY type, confidence, category"
_HOURS = "ioc_hour_groups", "hour >= ? AND hour < ?"
_DAYS = "ioc_day_counts", "day >= ? AND day < ?"
_MONTHS = "ioc_month_counts", "month >= ?"
_SOURCES = (
    "SELECT source, sum(n) FROM (SELECT source, n FROM ioc_hour_sources WHERE hour >= ? AND hour < ? "
    "UNION ALL SELECT source, n FROM ioc_day_sources WHERE day >= ?) GROUP BY source"
)
_TABLES = (
    "ioc_day_counts",
    "ioc_month_counts",
    "ioc_hour_groups",
    "ioc_day_sources",
    "ioc_hour_sources",
    "ioc_hour_counts",
)
DONE_KEY = "ioc_counters_version"  # meta: the counters' version once they hold every record
VERSION = 3  # 2: with the month counters, 3: with the hour counters


def apply(db: sqlite3.Connection, deltas: Counter[CounterKey]) -> None:
    """Add ``deltas`` to the counters (inside the caller's transaction)."""
    for kind, sql in _APPLY.items():
        rows = [(*key[1:], n) for key, n in changed(deltas) if key[0] == kind]
        if rows:
            db.executemany(sql, rows)


def clear(db: sqlite3.Connection) -> None:
    for table in _TABLES:
        db.execute(f"DELETE FROM {table}")


def scan(db: sqlite3.Connection, since: str, until: str | None, top: int | None) -> IocStats:
    """Stats counted from the records modified in ``[since, until)`` (no upper bound when None): the
    partial first day of a window, and the reference the counters are tested against."""
    bound, params = ("modified >= ? AND modified < ?", (since, until)) if until else ("modified >= ?", (since,))
    bound += f" AND {queries.LISTED_OUT}"  # the default view's records, as the counters count them

    def grouped(column: str) -> dict[str, int]:
        rows = db.execute(
            f"SELECT {column}, count(*) FROM iocs WHERE {bound} GROUP BY {column} ORDER BY {column}", params
        ).fetchall()
        return {r[0]: int(r[1]) for r in rows}

    total = db.execute(f"SELECT count(*) FROM iocs WHERE {bound}", params).fetchone()[0]
    sources = db.execute(
        "SELECT s.value, count(*) AS n FROM iocs, json_each(json_extract(iocs.doc, '$.sources')) AS s "
        f"WHERE {bound} GROUP BY s.value ORDER BY n DESC, s.value LIMIT ?",
        (*params, -1 if top is None else top),
    ).fetchall()
    hourly = db.execute(
        f"SELECT substr(modified, 1, 13) AS hour, count(*) FROM iocs WHERE {bound} GROUP BY hour ORDER BY hour", params
    ).fetchall()
    return IocStats(
        total=int(total),
        by_type=grouped("type"),
        by_confidence=grouped("confidence"),
        by_category=grouped("source_category"),
        top_sources=[(r[0], int(r[1])) for r in sources],
        hourly=[(r[0], int(r[1])) for r in hourly],
    )


def _window_groups(db: sqlite3.Connection, since: datetime | None, query: IocQuery | None = None) -> list[Any]:
    """The (type, confidence, category, n) sums of the whole hours from ``since`` (``store.ioc_counters.counter_span``):
    the first partial day's hours, the first partial month's days, then whole months; only the counters
    ``query`` filters for, if any."""
    span = counter_span(since)
    extra, params = queries.counter_where(query) if query is not None else ("1", [])
    return [
        row
        for (table, where), bounds in (
            (_HOURS, (span.hour, span.hour_end)),
            (_DAYS, (span.day, span.day_end)),
            (_MONTHS, (span.month,)),
        )
        for row in db.execute(_GROUPS.format(table=table, where=f"{where} AND {extra}"), (*bounds, *params))
    ]


def stats(db: sqlite3.Connection, since: datetime, top: int) -> IocStats:
    """Totals of records modified since ``since``: its partial first hour from the records, then counters."""
    head = scan(db, iso(since), iso(first_whole_hour(since)), None)
    span = counter_span(since)
    counted = combine(
        head,
        _window_groups(db, since),
        db.execute(_SOURCES, (span.hour, span.hour_end, span.day)).fetchall(),
        db.execute("SELECT hour, n FROM ioc_hour_counts WHERE hour >= ?", (span.hour,)).fetchall(),
        top,
    )
    return dataclasses.replace(counted, warninglisted=left_out(db, since))


def left_out(db: sqlite3.Connection, since: datetime) -> int:
    """Warninglisted records modified since ``since``, by their partial index (they are few)."""
    sql = "SELECT count(*) FROM iocs WHERE warninglisted = 1 AND modified >= ?"
    return int(db.execute(sql, (iso(since),)).fetchone()[0])


def count(db: sqlite3.Connection, query: IocQuery) -> int:
    """How many records match a countable query (``store.ioc_counters.countable``): the records of the
    partial first hour of ``since`` by index, then the counters."""
    head = 0
    if query.since is not None:
        whole = iso(first_whole_hour(query.since))
        where, params = queries.ioc_where(query)
        head = db.execute(f"SELECT count(*) FROM iocs WHERE {where} AND modified < ?", (*params, whole)).fetchone()[0]
    return int(head) + sum(int(row[3]) for row in _window_groups(db, query.since, query))


def migrate(db: sqlite3.Connection) -> int:
    """Count every record once (databases from before the counters); the number of records counted."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (DONE_KEY,)).fetchone()
    if row is not None and int(row[0]) >= VERSION:
        return 0
    db.execute("BEGIN IMMEDIATE")
    try:
        counted = _count_records(db)
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (DONE_KEY, VERSION))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled back itself (a full disk): see SqliteStore._write
            db.execute("ROLLBACK")
        raise
    return counted


def _count_records(db: sqlite3.Connection) -> int:
    clear(db)
    deltas: Counter[CounterKey] = Counter()
    counted = 0
    for (doc,) in db.execute("SELECT doc FROM iocs"):
        tally(deltas, None, from_doc(Ioc, orjson.loads(doc)))
        counted += 1
    apply(db, deltas)
    return counted
