"""Allowlist entries on the SQLite backend: one row per entry, unique by (owner, kind, value)."""

from __future__ import annotations

import sqlite3
from typing import Any

from store.base import NotFound, QuotaExceeded
from store.ports.allowlist import AllowEntry, AllowlistStore
from store.records import iso, parse_iso
from store.sqlite.part import SqlitePart

_COLUMNS = "id, user_id, kind, type, value, created_at, note"


def _entry(row: Any) -> AllowEntry:
    return AllowEntry(row[0], row[1], row[2], row[3], row[4], parse_iso(row[5]), row[6])


class SqliteAllowlist(SqlitePart, AllowlistStore):
    """Entries in the ``allowlist`` table; a deleted user's entries go with it (foreign key cascade)."""

    async def add_allow_entries(self, entries: list[AllowEntry], max_entries: int) -> list[AllowEntry]:
        def add(db: sqlite3.Connection) -> list[AllowEntry]:
            db.executemany(
                f"INSERT OR IGNORE INTO allowlist ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(e.id, e.user_id, e.kind, e.type, e.value, iso(e.created_at), e.note) for e in entries],
            )
            owner = entries[0].user_id
            held = db.execute("SELECT count(*) FROM allowlist WHERE user_id = ?", (owner,)).fetchone()[0]
            if held > max_entries:  # counted in the inserting transaction: raising rolls the batch back
                raise QuotaExceeded(f"an allowlist holds at most {max_entries:,} entries")
            sql = f"SELECT {_COLUMNS} FROM allowlist WHERE user_id = ? AND kind = ? AND value = ?"
            return [_entry(db.execute(sql, (owner, e.kind, e.value)).fetchone()) for e in entries]

        if not entries:
            return []
        return await self._run(lambda db: self._write(db, add))

    async def list_allow_entries(self, user_id: str) -> list[AllowEntry]:
        sql = f"SELECT {_COLUMNS} FROM allowlist WHERE user_id = ? ORDER BY created_at, id"
        return [_entry(r) for r in await self._all(sql, (user_id,))]

    async def delete_allow_entry(self, user_id: str, entry_id: str) -> None:
        def delete(db: sqlite3.Connection) -> None:
            if not db.execute("DELETE FROM allowlist WHERE user_id = ? AND id = ?", (user_id, entry_id)).rowcount:
                raise NotFound(f"no allowlist entry {entry_id!r}")

        await self._run(lambda db: self._write(db, delete))
