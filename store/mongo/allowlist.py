"""Allowlist entries on MongoDB: one document per entry in ``allowlist``, unique by (owner, kind, value)."""

from __future__ import annotations

from typing import Any

from pymongo import UpdateOne

from store.base import NotFound, QuotaExceeded
from store.mongo.errors import guarded
from store.mongo.part import MongoPart
from store.ports.allowlist import AllowEntry, AllowlistStore
from store.records import ms

_ORDER = [("created_at", 1), ("_id", 1)]


def _entry(doc: dict[str, Any]) -> AllowEntry:
    return AllowEntry(
        doc["_id"], doc["user_id"], doc["kind"], doc["type"], doc["value"], ms(doc["created_at"]), doc.get("note", "")
    )


def _insert(entry: AllowEntry) -> UpdateOne:
    """Insert unless the owner holds the (kind, value) already: ``$setOnInsert`` keeps the held entry."""
    fields = {"_id": entry.id, "type": entry.type, "created_at": entry.created_at, "note": entry.note}
    return UpdateOne(
        {"user_id": entry.user_id, "kind": entry.kind, "value": entry.value}, {"$setOnInsert": fields}, upsert=True
    )


class MongoAllowlist(MongoPart, AllowlistStore):
    """Entries in the ``allowlist`` collection; ``MongoAccounts.delete_user`` deletes a user's entries."""

    @guarded
    async def add_allow_entries(self, entries: list[AllowEntry], max_entries: int) -> list[AllowEntry]:
        """Upsert, then count: over the quota, the entries this call inserted are withdrawn again (as
        ``MongoFeeds.create_feed`` withdraws a feed), so the quota is never exceeded for long."""
        if not entries:
            return []
        coll, owner = self._c("allowlist"), entries[0].user_id
        result = await coll.bulk_write([_insert(e) for e in entries], ordered=False)
        if await coll.count_documents({"user_id": owner}) > max_entries:
            await coll.delete_many({"_id": {"$in": list((result.upserted_ids or {}).values())}})
            raise QuotaExceeded(f"an allowlist holds at most {max_entries:,} entries")
        held = {
            (d["kind"], d["value"]): _entry(d)
            async for d in coll.find({"user_id": owner, "value": {"$in": [e.value for e in entries]}})
        }
        return [held[e.kind, e.value] for e in entries]

    @guarded
    async def list_allow_entries(self, user_id: str) -> list[AllowEntry]:
        return [_entry(d) async for d in self._c("allowlist").find({"user_id": user_id}).sort(_ORDER)]

    @guarded
    async def delete_allow_entry(self, user_id: str, entry_id: str) -> None:
        if not (await self._c("allowlist").delete_one({"_id": entry_id, "user_id": user_id})).deleted_count:
            raise NotFound(f"no allowlist entry {entry_id!r}")
