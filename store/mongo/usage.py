"""Usage history on MongoDB (``store.usage``): one document per key and day, added with ``$inc`` upserts."""

from __future__ import annotations

from collections.abc import Sequence

from pymongo import UpdateOne

from store.mongo.errors import guarded
from store.mongo.part import MongoPart
from store.usage import UsageDay, UsageHistory, oldest_kept


class MongoUsage(MongoPart, UsageHistory):
    """The ``key_usage`` collection: the usage-history part of ``MongoAccounts``."""

    @guarded
    async def add_usage(self, days: Sequence[UsageDay]) -> None:
        if not days:
            return
        ops = [UpdateOne({"_id": f"{d.key_id}|{d.day}"},
                         {"$inc": {"requests": d.requests, "refused": d.refused},
                          "$setOnInsert": {"key_id": d.key_id, "day": d.day}}, upsert=True) for d in days]
        await self._c("key_usage").bulk_write(ops, ordered=False)
        await self._c("key_usage").delete_many({"day": {"$lt": oldest_kept(days)}})

    @guarded
    async def usage_history(self, key_ids: Sequence[str], since_day: str) -> list[UsageDay]:
        found = self._c("key_usage").find({"key_id": {"$in": list(key_ids)}, "day": {"$gte": since_day}})
        return [UsageDay(d["key_id"], d["day"], int(d["requests"]), int(d["refused"]))
                async for d in found.sort([("key_id", 1), ("day", 1)])]
