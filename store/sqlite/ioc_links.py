"""The IOC link relation on SQLite (``ioc_links``): every article, CVE and technique of a record, one row
each, so a record keeps counts and the most recent few (``store.codec.bounded``) and a write touches only
the links it reports.

Databases from before the relation kept every link inside each record's document; ``migrate`` moves them
into the relation once, in batches of one transaction each, resuming where a stopped run left off.
"""

from __future__ import annotations

import sqlite3
from collections import Counter

import orjson

from store.codec import bounded, counted, from_doc, ioc_links, to_doc
from store.records import LINK_FIELDS, Ioc

_INSERT = "INSERT OR IGNORE INTO ioc_links (type, value, kind, ref, seen) VALUES (?, ?, ?, ?, ?)"
_RESEEN = "UPDATE ioc_links SET seen = ? WHERE type = ? AND value = ? AND kind = ? AND ref = ? AND seen < ?"
_RECENT = "SELECT ref FROM ioc_links WHERE type = ? AND value = ? AND kind = ? ORDER BY seen DESC, ref DESC LIMIT ?"
DONE_KEY = "ioc_links_version"  # meta: 1 once every record's lists are in the relation
RESUME_KEY = "ioc_links_rowid"  # meta: the last iocs rowid moved by a migration still running
BATCH = 2000
LinkRow = tuple[str, str, str, str, str]  # (type, value, kind, ref, seen)


def _link_rows(ioc: Ioc) -> list[LinkRow]:
    return [(ioc.type, ioc.value, kind, ref, seen) for kind, ref, seen in ioc_links(ioc)]


def new_record(ioc: Ioc, pending: list[LinkRow]) -> Ioc:
    """The record to store for ``ioc``, which the store does not hold: the relation holds links of stored
    records only, so every link it lists is new. Its link rows join ``pending`` (``insert_links`` writes
    them in one statement with the rest of the batch's)."""
    rows = _link_rows(ioc)
    pending += rows
    added = Counter(kind for kind, _ in {(row[2], row[3]) for row in rows})
    return bounded(counted(ioc, None, dict(added)))


def insert_links(db: sqlite3.Connection, rows: list[LinkRow]) -> None:
    db.executemany(_INSERT, rows)


def add_links(db: sqlite3.Connection, ioc: Ioc) -> dict[str, int]:
    """Insert the links ``ioc`` lists (a known one keeps the later ``seen``); kind -> how many were new."""
    added: dict[str, int] = {}
    every = _link_rows(ioc)
    for kind, _ in LINK_FIELDS.values():
        rows = [row for row in every if row[2] == kind]
        if rows:
            added[kind] = db.executemany(_INSERT, rows).rowcount
            db.executemany(_RESEEN, [(seen, t, v, k, ref, seen) for t, v, k, ref, seen in rows])
    return added


def recent_links(db: sqlite3.Connection, ioc_type: str, value: str, kind: str, limit: int) -> list[str]:
    """The ``limit`` most recently reported links of one kind, newest first (index ``ioc_links_recent``)."""
    return [r[0] for r in db.execute(_RECENT, (ioc_type, value, kind, limit)).fetchall()]


def linked_record(db: sqlite3.Connection, merged: Ioc, held: Ioc | None, incoming: Ioc) -> Ioc:
    """The record to store: ``merged`` with ``incoming``'s links added to the relation, counted exactly
    and bounded to the most recent few."""
    return bounded(counted(merged, held, add_links(db, incoming)))


def _meta(db: sqlite3.Connection, key: str) -> int | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else int(row[0])


def _set_meta(db: sqlite3.Connection, key: str, value: int) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def migrate(db: sqlite3.Connection) -> int:
    """Move the lists of records written before the relation into it; the number of records moved.
    Each batch commits with its resume point, so a stop in the middle never counts a link twice."""
    if _meta(db, DONE_KEY) == 1:
        return 0
    last, moved = _meta(db, RESUME_KEY) or 0, 0
    while rows := db.execute(
        "SELECT rowid, doc FROM iocs WHERE rowid > ? ORDER BY rowid LIMIT ?", (last, BATCH)
    ).fetchall():
        db.execute("BEGIN IMMEDIATE")
        try:
            _move(db, rows)
            last, moved = rows[-1][0], moved + len(rows)
            _set_meta(db, RESUME_KEY, last)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite may have rolled back itself (a full disk): see SqliteStore._write
                db.execute("ROLLBACK")
            raise
    _set_meta(db, DONE_KEY, 1)
    db.execute("DELETE FROM meta WHERE key = ?", (RESUME_KEY,))
    return moved


def _move(db: sqlite3.Connection, rows: list[tuple[int, bytes]]) -> None:
    for rowid, doc in rows:
        ioc = from_doc(Ioc, orjson.loads(doc))
        record = linked_record(db, ioc, None, ioc)
        db.execute(
            "UPDATE iocs SET doc = ?, api_json = ? WHERE rowid = ?",
            (orjson.dumps(to_doc(record)), orjson.dumps(record.stored_api()), rowid),
        )
