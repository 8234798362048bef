"""The IOC counters on SQLite (``ioc_day_counts``, ``ioc_day_sources``, ``ioc_hour_counts``; see
``store.ioc_counters``): written in the transaction of every IOC write, read by the stats and list totals.

Databases from before the counters get them once at open (``migrate``), in one pass over the records.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from datetime import datetime

import orjson

from store.base import IocStats
from store.codec import from_doc
from store.ioc_counters import DAY, HOUR, SOURCE, CounterKey, changed, combine, day_matches, first_whole_day, tally
from store.query import IocQuery
from store.records import Ioc, iso
from store.sqlite import queries

_ADD = " ON CONFLICT DO UPDATE SET n = n + excluded.n"
_APPLY = {
    DAY: "INSERT INTO ioc_day_counts (day, type, confidence, category, n) VALUES (?, ?, ?, ?, ?)" + _ADD,
    SOURCE: "INSERT INTO ioc_day_sources (day, source, n) VALUES (?, ?, ?)" + _ADD,
    HOUR: "INSERT INTO ioc_hour_counts (hour, n) VALUES (?, ?)" + _ADD,
}
_DAYS = (
    "SELECT type, confidence, category, sum(n) FROM ioc_day_counts WHERE day >= ? GROUP BY type, confidence, category"
)
DONE_KEY = "ioc_counters_version"  # meta: 1 once the counters hold every record


def apply(db: sqlite3.Connection, deltas: Counter[CounterKey]) -> None:
    """Add ``deltas`` to the counters (inside the caller's transaction)."""
    for kind, sql in _APPLY.items():
        rows = [(*key[1:], n) for key, n in changed(deltas) if key[0] == kind]
        if rows:
            db.executemany(sql, rows)


def clear(db: sqlite3.Connection) -> None:
    for table in ("ioc_day_counts", "ioc_day_sources", "ioc_hour_counts"):
        db.execute(f"DELETE FROM {table}")


def scan(db: sqlite3.Connection, since: str, until: str | None, top: int | None) -> IocStats:
    """Stats counted from the records modified in ``[since, until)`` (no upper bound when None): the
    partial first day of a window, and the reference the counters are tested against."""
    bound, params = ("modified >= ? AND modified < ?", (since, until)) if until else ("modified >= ?", (since,))

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


def stats(db: sqlite3.Connection, since: datetime, top: int) -> IocStats:
    """Totals of records modified since ``since``: its partial first day from the records, then counters."""
    whole = iso(first_whole_day(since))
    head = scan(db, iso(since), whole, None)
    day = whole[:10]
    return combine(
        head,
        db.execute(_DAYS, (day,)).fetchall(),
        db.execute("SELECT source, sum(n) FROM ioc_day_sources WHERE day >= ? GROUP BY source", (day,)).fetchall(),
        db.execute("SELECT hour, n FROM ioc_hour_counts WHERE hour >= ?", (day,)).fetchall(),
        top,
    )


def count(db: sqlite3.Connection, query: IocQuery) -> int:
    """How many records match a countable query (``store.ioc_counters.countable``): the records of the
    partial first day of ``since`` by index, then the whole days' counters."""
    day = ""
    head = 0
    if query.since is not None:
        whole = iso(first_whole_day(query.since))
        where, params = queries.ioc_where(query)
        head = db.execute(f"SELECT count(*) FROM iocs WHERE {where} AND modified < ?", (*params, whole)).fetchone()[0]
        day = whole[:10]
    return int(head) + sum(
        int(n) for t, c, cat, n in db.execute(_DAYS, (day,)).fetchall() if day_matches(query, t, c, cat)
    )


def migrate(db: sqlite3.Connection) -> int:
    """Count every record once (databases from before the counters); the number of records counted."""
    if db.execute("SELECT value FROM meta WHERE key = ?", (DONE_KEY,)).fetchone():
        return 0
    db.execute("BEGIN IMMEDIATE")
    try:
        clear(db)
        deltas: Counter[CounterKey] = Counter()
        counted = 0
        for (doc,) in db.execute("SELECT doc FROM iocs"):
            tally(deltas, None, from_doc(Ioc, orjson.loads(doc)))
            counted += 1
        apply(db, deltas)
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, 1)", (DONE_KEY,))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled back itself (a full disk): see SqliteStore._write
            db.execute("ROLLBACK")
        raise
    return counted
