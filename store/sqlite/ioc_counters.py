"""The IOC counters on SQLite (``ioc_day_counts``, ``ioc_month_counts``, ``ioc_day_sources``, ``ioc_hour_counts`` and
the rest of ``_TABLES``; see ``store.ioc_counters``): written in the transaction of every IOC write, read by the
stats and list totals.

Databases from before the counters get them once at open (``migrate``), in one pass over the records;
databases from before the month and hour counters get them the same way. The month source and day total
counters are sums of the day source and hour counters, so a database from before them gets them from
those, without reading a record.
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
    DAY_TOTAL,
    HOUR,
    HOUR_GROUP,
    HOUR_SOURCE,
    MONTH,
    MONTH_SOURCE,
    SOURCE,
    CounterKey,
    changed,
    combine,
    counter_span,
    derived,
    first_whole_hour,
    series_days,
    signed,
    tally,
    window_edge,
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
    MONTH_SOURCE: "INSERT INTO ioc_month_sources (month, source, n) VALUES (?, ?, ?)" + _ADD,
    DAY_TOTAL: "INSERT INTO ioc_day_totals (day, n) VALUES (?, ?)" + _ADD,
}
_GROUPS = "SELECT type, confidence, category, sum(n) FROM {table} WHERE {where} GROUP BY type, confidence, category"
_HOURS = "ioc_hour_groups", "hour >= ? AND hour < ?"
_DAYS = "ioc_day_counts", "day >= ? AND day < ?"
_MONTHS = "ioc_month_counts", "month >= ?"
_SOURCES = (
    "SELECT source, sum(n) FROM (SELECT source, n FROM ioc_hour_sources WHERE hour >= ? AND hour < ? "
    "UNION ALL SELECT source, n FROM ioc_day_sources WHERE day >= ? AND day < ? "
    "UNION ALL SELECT source, n FROM ioc_month_sources WHERE month >= ?) GROUP BY source"
)
# The series: hours through the window's second midnight, then days (store.ioc_counters.coarse).
_SERIES = (
    "SELECT hour, n FROM ioc_hour_counts WHERE hour >= ? AND hour < ? "
    "UNION ALL SELECT day, n FROM ioc_day_totals WHERE day >= ?"
)
_TABLES = (
    "ioc_day_counts",
    "ioc_month_counts",
    "ioc_hour_groups",
    "ioc_day_sources",
    "ioc_hour_sources",
    "ioc_hour_counts",
    "ioc_month_sources",
    "ioc_day_totals",
)
DONE_KEY = "ioc_counters_version"  # meta: the counters' version once they hold every record
VERSION = 4  # 2: with the month counters, 3: with the hour counters, 4: month sources and day totals
_SUMMED = 3  # from this version on, the newer counters are summed from the stored ones (``derived``)


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
    partial first hour of a window, and the reference the counters are tested against. One pass over the
    records (their documents are read once for the sources, not once per grouping)."""
    bound, params = ("modified >= ? AND modified < ?", (since, until)) if until else ("modified >= ?", (since,))
    rows = db.execute(
        "SELECT type, confidence, source_category, substr(modified, 1, 13), json_extract(doc, '$.sources') "
        f"FROM iocs WHERE {bound} AND {queries.LISTED_OUT}",  # the default view's records, as the counters count
        params,
    ).fetchall()
    return combine(
        IocStats(0, {}, {}, {}, []),
        [(ioc_type, confidence, category, 1) for ioc_type, confidence, category, _, _ in rows],
        [(source, 1) for row in rows for source in dict.fromkeys(orjson.loads(row[4] or "[]"))],
        [(row[3], 1) for row in rows],
        top,
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
    """Totals of records modified since ``since``: the counters from the whole hour nearest it, corrected by
    the records between the two (``store.ioc_counters.window_edge``)."""
    edge = window_edge(since)
    head = signed(scan(db, iso(edge.low), iso(edge.high), None), edge.sign)
    span, days = counter_span(edge.start), series_days(since)
    counted = combine(
        head,
        _window_groups(db, edge.start),
        db.execute(_SOURCES, (span.hour, span.hour_end, span.day, span.day_end, span.month)).fetchall(),
        db.execute(_SERIES, (span.hour, days, days)).fetchall(),
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
        counted = _sum_counters(db) if row is not None and int(row[0]) >= _SUMMED else _count_records(db)
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (DONE_KEY, VERSION))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled back itself (a full disk): see SqliteStore._write
            db.execute("ROLLBACK")
        raise
    return counted


def _sum_counters(db: sqlite3.Connection) -> int:
    """Add the month source and day total counters from the day source and hour counters; 0 records read."""
    for table in ("ioc_month_sources", "ioc_day_totals"):
        db.execute(f"DELETE FROM {table}")
    stored = [
        *(((SOURCE, day, source), n) for day, source, n in db.execute("SELECT day, source, n FROM ioc_day_sources")),
        *(((HOUR, hour), n) for hour, n in db.execute("SELECT hour, n FROM ioc_hour_counts")),
    ]
    apply(db, derived(stored))
    return 0


def _count_records(db: sqlite3.Connection) -> int:
    clear(db)
    deltas: Counter[CounterKey] = Counter()
    counted = 0
    for (doc,) in db.execute("SELECT doc FROM iocs"):
        tally(deltas, None, from_doc(Ioc, orjson.loads(doc)))
        counted += 1
    apply(db, deltas)
    return counted
