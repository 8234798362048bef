"""Saved feeds on the SQLite backend: one row per feed, its owner, name and creation as columns."""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

from store.base import Conflict, NotFound, QuotaExceeded
from store.codec import from_doc, to_doc
from store.ports import FeedStore
from store.records import Feed, iso
from store.sqlite.part import SqlitePart, _json


def _feed(row: Any) -> Feed:
    return from_doc(Feed, orjson.loads(row[0]))


class SqliteFeeds(SqlitePart, FeedStore):
    """Feeds in the ``feeds`` table; a deleted user's feeds go with it (foreign key cascade)."""

    async def create_feed(self, feed: Feed, max_feeds: int) -> Feed:
        def insert(db: sqlite3.Connection) -> None:
            held = db.execute("SELECT count(*) FROM feeds WHERE user_id = ?", (feed.user_id,)).fetchone()[0]
            if held >= max_feeds:  # counted in the inserting transaction: two creations cannot both pass
                raise QuotaExceeded(f"this plan allows at most {max_feeds} saved feeds")
            db.execute(
                "INSERT INTO feeds (id, user_id, name, created_at, doc) VALUES (?, ?, ?, ?, ?)",
                (feed.id, feed.user_id, feed.name, iso(feed.created_at), _json(to_doc(feed))),
            )

        await self._guarded_write(insert, feed.name)
        return feed

    async def _guarded_write(self, fn: Any, name: str) -> None:
        try:
            await self._run(lambda db: self._write(db, fn))
        except sqlite3.IntegrityError as exc:
            problem = "exists" if "UNIQUE" in str(exc) else "has no owner"  # else the foreign key refused it
            raise Conflict(f"a feed named {name!r} {problem}") from exc

    async def list_feeds(self, user_id: str) -> list[Feed]:
        rows = await self._all("SELECT doc FROM feeds WHERE user_id = ? ORDER BY created_at, id", (user_id,))
        return [_feed(r) for r in rows]

    async def get_feed(self, user_id: str, feed_id: str) -> Feed | None:
        row = await self._one("SELECT doc FROM feeds WHERE user_id = ? AND id = ?", (user_id, feed_id))
        return None if row is None else _feed(row)

    async def update_feed(self, feed: Feed) -> Feed:
        def update(db: sqlite3.Connection) -> None:
            done = db.execute(
                "UPDATE feeds SET name = ?, doc = ? WHERE user_id = ? AND id = ?",
                (feed.name, _json(to_doc(feed)), feed.user_id, feed.id),
            )
            if not done.rowcount:
                raise NotFound(f"no feed {feed.id!r}")

        await self._guarded_write(update, feed.name)
        return feed

    async def delete_feed(self, user_id: str, feed_id: str) -> None:
        def delete(db: sqlite3.Connection) -> None:
            if not db.execute("DELETE FROM feeds WHERE user_id = ? AND id = ?", (user_id, feed_id)).rowcount:
                raise NotFound(f"no feed {feed_id!r}")

        await self._run(lambda db: self._write(db, delete))

    async def all_feeds(self) -> list[Feed]:
        return [_feed(r) for r in await self._all("SELECT doc FROM feeds ORDER BY user_id, created_at, id")]
