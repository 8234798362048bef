"""The stored encoded forms: each article's list form (``articles.list_json``) and CSV line
(``articles.csv_line``), and each IOC record's API form (``iocs.api_json``),
versioned.

SQLite keeps every article's encoded list form beside its document, written with the row, so a page
streams stored bytes; MongoDB encodes it on read. When ``Article.list_form`` changes shape, rows written
before would answer in the old shape on SQLite only. So the shape carries a version
(``store.records.LIST_FORM_VERSION``) and the database remembers the version of its stored forms
(``meta.list_form_version``): a store opened on an older version re-encodes every row from its document,
in batches of one transaction each, reporting progress (the CLI draws a bar for large databases). A stop
in the middle leaves the old version recorded, so the next open finishes the job: re-encoding is idempotent.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import orjson

from store.codec import from_doc
from store.csvform import csv_line
from store.decay import ladder_place
from store.records import LIST_FORM_VERSION, Article, Ioc, iso
from store.sqlite.scores import stored_form

META_KEY = "list_form_version"
BATCH = 2000
Progress = Callable[[int, int], None]


def stored_version(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
    return int(row[0]) if row else 0


def _article_form(doc: bytes) -> bytes:
    return orjson.dumps(from_doc(Article, orjson.loads(doc)).list_form())


def _csv_form(doc: bytes) -> bytes:
    return csv_line(from_doc(Article, orjson.loads(doc)).list_form())


def _ioc_form(doc: bytes) -> bytes:
    return stored_form(from_doc(Ioc, orjson.loads(doc)))


def _ioc_valid_until(doc: bytes) -> str:
    return iso(from_doc(Ioc, orjson.loads(doc)).valid_until)


def _ioc_revoked(doc: bytes) -> int:
    return int(from_doc(Ioc, orjson.loads(doc)).revoked)


def _ioc_place(doc: bytes) -> int:
    ioc = from_doc(Ioc, orjson.loads(doc))
    return ladder_place(ioc.type, ioc.valid_until, ioc.revoked)


# (table, column of the encoded form, encoder from the stored document); the IOC lifecycle columns too.
FORMS: tuple[tuple[str, str, Callable[[bytes], Any]], ...] = (
    ("articles", "list_json", _article_form), ("articles", "csv_line", _csv_form), ("iocs", "api_json", _ioc_form),
    ("iocs", "valid_until", _ioc_valid_until), ("iocs", "revoked", _ioc_revoked),
    ("iocs", "score_place", _ioc_place))


def rebuild(db: sqlite3.Connection, progress: Progress | None = None) -> int:
    """Re-encode every stored form unless they are of the current version; the number of rows done."""
    if stored_version(db) == LIST_FORM_VERSION:
        return 0
    total = sum(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table, _, _ in FORMS)
    done = 0
    for table, column, encode in FORMS:
        last = 0
        while rows := db.execute(f"SELECT rowid, doc FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT ?",
                                 (last, BATCH)).fetchall():
            _update(db, f"UPDATE {table} SET {column} = ? WHERE rowid = ?", [(encode(d), r) for r, d in rows])
            last, done = rows[-1][0], done + len(rows)
            if progress is not None:
                progress(done, total)
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (META_KEY, LIST_FORM_VERSION))
    return done


def _update(db: sqlite3.Connection, sql: str, rows: list[tuple[Any, int]]) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        db.executemany(sql, rows)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled back itself (a full disk): see SqliteStore._write
            db.execute("ROLLBACK")
        raise
