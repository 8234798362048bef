"""The event log of the embedded mode: an ``events`` table in the SQLite file every process opens.

Writers are serialised by SQLite (``BEGIN IMMEDIATE``), so the id a transaction assigns is greater than
every id committed before it and no later commit can slip in below it: a reader that asks for the events
after the last id it saw never misses one. Each API process asks once per poll, with one indexed query.
The horizon (first and trimmed ids) is kept in the ``meta`` table, the open streams in ``stream_slots``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from store.ports.events import DEFAULT_RETENTION, Event, EventId, EventLog, Horizon, NewEvent, now_ms
from store.records import utcnow
from store.sqlite.backend import SqliteStore
from store.sqlite.part import SqlitePart, _tuples

EVENTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    ms INTEGER NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (ms, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS stream_slots (
    owner TEXT NOT NULL, slot TEXT NOT NULL, expires REAL NOT NULL, PRIMARY KEY (owner, slot)
) WITHOUT ROWID;
"""
TRIM_EVERY = timedelta(minutes=1)  # appends between trims of one process: the retention is days


def _get_id(db: sqlite3.Connection, name: str) -> EventId | None:
    rows = dict(db.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (f"{name}_ms", f"{name}_seq")))
    return EventId(rows[f"{name}_ms"], rows[f"{name}_seq"]) if len(rows) == 2 else None


def _set_id(db: sqlite3.Connection, name: str, value: EventId) -> None:
    db.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", ((f"{name}_ms", value.ms), (f"{name}_seq", value.seq))
    )


def _last(db: sqlite3.Connection) -> EventId | None:
    row = db.execute("SELECT ms, seq FROM events ORDER BY ms DESC, seq DESC LIMIT 1").fetchone()
    kept = EventId(row[0], row[1]) if row else None
    trimmed = _get_id(db, "events_trimmed")
    return max((i for i in (kept, trimmed) if i is not None), default=None)


class SqliteEventLog(SqlitePart, EventLog):
    """Events in the ``events`` table of ``conn``'s file. ``owned``: the log opened a file of its own
    (MongoDB without Redis keeps its events in the data dir) and opens and closes it."""

    name = "sqlite"

    def __init__(self, conn: SqliteStore, retention: timedelta = DEFAULT_RETENTION, owned: bool = False) -> None:
        SqlitePart.__init__(self, conn)
        EventLog.__init__(self, retention)
        self._owned = owned
        self._trimmed_at = 0.0

    @classmethod
    def in_file(cls, path: Path, retention: timedelta = DEFAULT_RETENTION) -> SqliteEventLog:
        return cls(SqliteStore(path), retention, owned=True)

    async def open(self) -> None:
        if self._owned:
            await self._conn.open()
        await self._run(lambda db: db.executescript(EVENTS_SCHEMA))

    async def close(self) -> None:
        if self._owned:
            await self._conn.close()

    async def append(self, events: Sequence[NewEvent]) -> list[EventId]:
        if not events:
            return []

        def add(db: sqlite3.Connection) -> list[EventId]:
            last, ids = _last(db) or EventId(0, 0), []
            for _ in events:
                last = last.successor(now_ms())
                ids.append(last)
            db.executemany(
                "INSERT INTO events (ms, seq, kind, data) VALUES (?, ?, ?, ?)",
                [(i.ms, i.seq, e.kind, e.data) for i, e in zip(ids, events, strict=True)],
            )
            if _get_id(db, "events_first") is None:
                _set_id(db, "events_first", ids[0])
            return ids

        ids = await self._run(lambda db: self._write(db, add))
        if time.monotonic() - self._trimmed_at >= TRIM_EVERY.total_seconds():
            self._trimmed_at = time.monotonic()
            await self.trim(utcnow() - self.retention)
        return ids

    async def read(self, after: EventId | None, limit: int) -> list[Event]:
        start = after or EventId(-1, -1)
        sql = "SELECT ms, seq, kind, data FROM events WHERE (ms, seq) > (?, ?) ORDER BY ms, seq LIMIT ?"
        rows = await self._run(lambda db: _tuples(db, sql, (start.ms, start.seq, limit)))
        return [Event(EventId(ms, seq), kind, bytes(data)) for ms, seq, kind, data in rows]

    async def horizon(self) -> Horizon:
        def read(db: sqlite3.Connection) -> Horizon:
            return Horizon(_get_id(db, "events_first"), _get_id(db, "events_trimmed"), _last(db))

        return await self._run(read)

    async def trim(self, before: datetime) -> int:
        cutoff = int(before.timestamp() * 1000)

        def remove(db: sqlite3.Connection) -> int:
            row = db.execute(
                "SELECT ms, seq FROM events WHERE ms < ? ORDER BY ms DESC, seq DESC LIMIT 1", (cutoff,)
            ).fetchone()
            if row is None:
                return 0
            _set_id(db, "events_trimmed", EventId(row[0], row[1]))
            return int(db.execute("DELETE FROM events WHERE ms < ?", (cutoff,)).rowcount)

        return await self._run(lambda db: self._write(db, remove))

    # -- open streams ------------------------------------------------------------------------
    async def acquire_slot(self, owner: str, slot: str, limit: int, ttl: float) -> bool:
        def take(db: sqlite3.Connection) -> bool:
            now = time.time()
            db.execute("DELETE FROM stream_slots WHERE owner = ? AND expires <= ?", (owner, now))
            held = db.execute("SELECT count(*) FROM stream_slots WHERE owner = ?", (owner,)).fetchone()[0]
            if held >= limit:
                return False
            db.execute(
                "INSERT OR REPLACE INTO stream_slots (owner, slot, expires) VALUES (?, ?, ?)", (owner, slot, now + ttl)
            )
            return True

        return await self._run(lambda db: self._write(db, take))

    async def renew_slots(self, slots: Sequence[tuple[str, str]], ttl: float) -> None:
        if not slots:
            return
        rows = [(time.time() + ttl, owner, slot) for owner, slot in slots]
        sql = "UPDATE stream_slots SET expires = ? WHERE owner = ? AND slot = ?"
        await self._run(lambda db: self._write(db, lambda d: d.executemany(sql, rows)))

    async def release_slot(self, owner: str, slot: str) -> None:
        sql = "DELETE FROM stream_slots WHERE owner = ? AND slot = ?"
        await self._run(lambda db: self._write(db, lambda d: d.execute(sql, (owner, slot))))
