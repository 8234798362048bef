"""Usage history on SQLite (``store.usage``): one row per key and day, added with an upsert that increments."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from store.sqlite.part import SqlitePart
from store.usage import UsageDay, UsageHistory, oldest_kept

_ADD = ("INSERT INTO key_usage (key_id, day, requests, refused) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (key_id, day) DO UPDATE SET requests = requests + excluded.requests, "
        "refused = refused + excluded.refused")


class SqliteUsage(SqlitePart, UsageHistory):
    """The ``key_usage`` table: the usage-history part of ``SqliteAccounts``."""

    async def add_usage(self, days: Sequence[UsageDay]) -> None:
        if not days:
            return
        rows = [(d.key_id, d.day, d.requests, d.refused) for d in days]

        def add(db: sqlite3.Connection) -> Any:
            db.executemany(_ADD, rows)
            return db.execute("DELETE FROM key_usage WHERE day < ?", (oldest_kept(days),))

        await self._run(lambda db: self._write(db, add))

    async def usage_history(self, key_ids: Sequence[str], since_day: str) -> list[UsageDay]:
        marks = ", ".join("?" * len(key_ids))
        rows = await self._run(lambda db: db.execute(
            f"SELECT key_id, day, requests, refused FROM key_usage WHERE key_id IN ({marks}) AND day >= ? "
            "ORDER BY key_id, day", (*key_ids, since_day)).fetchall())
        return [UsageDay(r[0], r[1], int(r[2]), int(r[3])) for r in rows]
