"""Saved feeds on MongoDB: one document per feed in ``feeds``, unique by (owner, name)."""

from __future__ import annotations

from typing import Any

from pymongo.errors import DuplicateKeyError

from store.base import Conflict, NotFound, QuotaExceeded
from store.codec import from_doc, to_doc
from store.mongo.errors import guarded
from store.mongo.part import MongoPart
from store.ports import FeedStore
from store.records import Feed

_ORDER = [("created_at", 1), ("_id", 1)]


def _doc(feed: Feed) -> dict[str, Any]:
    doc = to_doc(feed)
    doc["_id"] = doc.pop("id")
    return doc


def _feed(doc: dict[str, Any]) -> Feed:
    return from_doc(Feed, {**doc, "id": doc["_id"]})


class MongoFeeds(MongoPart, FeedStore):
    """Feeds in the ``feeds`` collection; ``MongoAccounts.delete_user`` deletes a user's feeds."""

    @guarded
    async def create_feed(self, feed: Feed, max_feeds: int) -> Feed:
        """Count, insert, count again, as ``MongoAccounts.create_key`` does for the key quota: two concurrent
        creations that would pass it together both withdraw, so the quota is never exceeded."""
        feeds, owner = self._c("feeds"), {"user_id": feed.user_id}
        if await self._c("users").find_one({"_id": feed.user_id}, {"_id": 1}) is None:
            raise Conflict(f"a feed named {feed.name!r} has no owner")  # SQLite: the foreign key refuses it
        if await feeds.count_documents(owner) >= max_feeds:
            raise QuotaExceeded(f"this plan allows at most {max_feeds} saved feeds")
        try:
            await feeds.insert_one(_doc(feed))
        except DuplicateKeyError as exc:
            raise Conflict(f"a feed named {feed.name!r} exists") from exc
        if await feeds.count_documents(owner) > max_feeds:
            await feeds.delete_one({"_id": feed.id})
            raise QuotaExceeded(f"this plan allows at most {max_feeds} saved feeds")
        return feed

    @guarded
    async def list_feeds(self, user_id: str) -> list[Feed]:
        return [_feed(d) async for d in self._c("feeds").find({"user_id": user_id}).sort(_ORDER)]

    @guarded
    async def get_feed(self, user_id: str, feed_id: str) -> Feed | None:
        doc = await self._c("feeds").find_one({"_id": feed_id, "user_id": user_id})
        return None if doc is None else _feed(doc)

    @guarded
    async def update_feed(self, feed: Feed) -> Feed:
        try:
            done = await self._c("feeds").replace_one({"_id": feed.id, "user_id": feed.user_id}, _doc(feed))
        except DuplicateKeyError as exc:
            raise Conflict(f"a feed named {feed.name!r} exists") from exc
        if not done.matched_count:
            raise NotFound(f"no feed {feed.id!r}")
        return feed

    @guarded
    async def delete_feed(self, user_id: str, feed_id: str) -> None:
        if not (await self._c("feeds").delete_one({"_id": feed_id, "user_id": user_id})).deleted_count:
            raise NotFound(f"no feed {feed_id!r}")

    @guarded
    async def all_feeds(self) -> list[Feed]:
        return [_feed(d) async for d in self._c("feeds").find({}).sort([("user_id", 1), *_ORDER])]
