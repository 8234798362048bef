"""The IOC link relation on SQLite (``ioc_refs``): every article, CVE and technique of a record, one row
each, so a record keeps counts and the most recent few (``store.codec.bounded``) and a write touches only
the links it reports.

Links are keyed by the record's rowid, not its (type, value): a new record takes the next rowid, so the
links of the new records of a write (most of a feed's) are appended at the end of both the table and its
``ioc_refs_recent`` index instead of being inserted at random places, which kept a seeding's cost per
article growing with the relation's size (BENCHMARKS.md, ``scripts/bench scale``). Records are only ever
deleted all together with their links (``replace_iocs``), so a rowid never comes back to a stale link.

Databases from before the relation kept every link inside each record's document; ``migrate`` moves them
into the relation once, in batches of one transaction each, resuming where a stopped run left off.
Databases from before the rowid key (``ioc_links``, keyed by type and value) are moved over at open.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from functools import partial

import orjson

from store.codec import bounded, counted, from_doc, ioc_links, to_doc
from store.records import LINK_FIELDS, Ioc
from store.sqlite.scores import stored_form

_INSERT = "INSERT OR IGNORE INTO ioc_refs (ioc, kind, ref, seen) VALUES (?, ?, ?, ?)"
_RESEEN = "UPDATE ioc_refs SET seen = ? WHERE ioc = ? AND kind = ? AND ref = ? AND seen < ?"
_RECENT = (
    "SELECT ref FROM ioc_refs WHERE ioc = (SELECT rowid FROM iocs WHERE type = ? AND value = ?) AND kind = ? "
    "ORDER BY seen DESC, ref DESC LIMIT ?"
)
# The relation as keyed by (type, value) before the rowid key, moved over once (``_adopt_text_keys``).
_TEXT_KEYED = "ioc_links"
_ADOPT = (
    "INSERT OR IGNORE INTO ioc_refs (ioc, kind, ref, seen) SELECT i.rowid, l.kind, l.ref, l.seen "
    "FROM ioc_links l JOIN iocs i ON i.type = l.type AND i.value = l.value ORDER BY 1, 2, 3"
)
DONE_KEY = "ioc_links_version"  # meta: 1 once every record's lists are in the relation
RESUME_KEY = "ioc_links_rowid"  # meta: the last iocs rowid moved by a migration still running
BATCH = 2000
LinkRow = tuple[int, str, str, str]  # (the record's rowid, kind, ref, seen)


def _link_rows(rowid: int, ioc: Ioc) -> list[LinkRow]:
    return [(rowid, kind, ref, seen) for kind, ref, seen in ioc_links(ioc)]


def new_record(rowid: int, ioc: Ioc, pending: list[LinkRow]) -> Ioc:
    """The record to store for ``ioc`` as the new row ``rowid``: the relation holds links of stored
    records only, so every link it lists is new. Its link rows join ``pending`` (``insert_links`` writes
    them in one statement with the rest of the batch's)."""
    rows = _link_rows(rowid, ioc)
    pending += rows
    added = Counter(kind for kind, _ in {(row[1], row[2]) for row in rows})
    return bounded(counted(ioc, None, dict(added)))


def insert_links(db: sqlite3.Connection, rows: list[LinkRow]) -> None:
    db.executemany(_INSERT, rows)


def add_links(db: sqlite3.Connection, rowid: int, ioc: Ioc) -> dict[str, int]:
    """Insert the links ``ioc`` lists for the row ``rowid`` (a known one keeps the later ``seen``); kind ->
    how many were new."""
    added: dict[str, int] = {}
    every = _link_rows(rowid, ioc)
    for kind, _ in LINK_FIELDS.values():
        rows = [row for row in every if row[1] == kind]
        if rows:
            added[kind] = db.executemany(_INSERT, rows).rowcount
            db.executemany(_RESEEN, [(seen, i, k, ref, seen) for i, k, ref, seen in rows])
    return added


def recent_links(db: sqlite3.Connection, ioc_type: str, value: str, kind: str, limit: int) -> list[str]:
    """The ``limit`` most recently reported links of one kind, newest first (index ``ioc_refs_recent``)."""
    return [r[0] for r in db.execute(_RECENT, (ioc_type, value, kind, limit)).fetchall()]


def linked_record(db: sqlite3.Connection, rowid: int, merged: Ioc, held: Ioc | None, incoming: Ioc) -> Ioc:
    """The record to store in row ``rowid``: ``merged`` with ``incoming``'s links added to the relation,
    counted exactly and bounded to the most recent few."""
    return bounded(counted(merged, held, add_links(db, rowid, incoming)))


def _meta(db: sqlite3.Connection, key: str) -> int | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else int(row[0])


def _set_meta(db: sqlite3.Connection, key: str, value: int) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def _adopt_text_keys(db: sqlite3.Connection) -> None:
    """Move the links of the relation keyed by (type, value) to the rowid key, in one transaction."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_TEXT_KEYED,)).fetchone():
        return
    _transaction(db, lambda: (db.execute(_ADOPT), db.execute(f"DROP TABLE {_TEXT_KEYED}")))


def _transaction(db: sqlite3.Connection, fn: Callable[[], object]) -> None:
    """``fn`` in one write transaction (``SqliteStore._write``, which this module's importer defines)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        fn()
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled back itself (a full disk): see SqliteStore._write
            db.execute("ROLLBACK")
        raise


def migrate(db: sqlite3.Connection) -> int:
    """Move the lists of records written before the relation into it; the number of records moved.
    Each batch commits with its resume point, so a stop in the middle never counts a link twice."""
    _adopt_text_keys(db)
    if _meta(db, DONE_KEY) == 1:
        return 0
    last, moved = _meta(db, RESUME_KEY) or 0, 0
    while rows := db.execute(
        "SELECT rowid, doc FROM iocs WHERE rowid > ? ORDER BY rowid LIMIT ?", (last, BATCH)
    ).fetchall():
        _transaction(db, partial(_move, db, rows))
        last, moved = rows[-1][0], moved + len(rows)
    _set_meta(db, DONE_KEY, 1)
    db.execute("DELETE FROM meta WHERE key = ?", (RESUME_KEY,))
    return moved


def _move(db: sqlite3.Connection, rows: list[tuple[int, bytes]]) -> None:
    """Move one batch's lists and note the batch as the resume point (in the batch's transaction)."""
    for rowid, doc in rows:
        ioc = from_doc(Ioc, orjson.loads(doc))
        record = linked_record(db, rowid, ioc, None, ioc)
        db.execute(
            "UPDATE iocs SET doc = ?, api_json = ? WHERE rowid = ?",
            (orjson.dumps(to_doc(record)), stored_form(record), rowid),
        )
    _set_meta(db, RESUME_KEY, rows[-1][0])
