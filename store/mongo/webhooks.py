"""Webhooks on MongoDB: one document per webhook in ``webhooks`` (the claim in ``claimed_until``), one per
delivery in ``webhook_deliveries``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from store.base import Conflict, NotFound, QuotaExceeded
from store.codec import from_doc, to_doc
from store.mongo.errors import guarded
from store.mongo.part import MongoPart
from store.ports.webhooks import Delivery, Webhook, WebhookStore

_ORDER = [("created_at", 1), ("_id", 1)]
_STATE = ("cursor", "failures", "next_attempt", "paused", "last_error")


def _doc(record: Webhook | Delivery) -> dict[str, Any]:
    doc = to_doc(record)
    doc["_id"] = doc.pop("id")
    return doc


def _hook(doc: dict[str, Any]) -> Webhook:
    return from_doc(Webhook, {**doc, "id": doc["_id"]})


class MongoWebhooks(MongoPart, WebhookStore):
    """``MongoAccounts.delete_user`` deletes a user's webhooks and their deliveries."""

    @guarded
    async def create_webhook(self, hook: Webhook, max_webhooks: int) -> Webhook:
        """Count, insert, count again, as ``MongoFeeds.create_feed``: racing creations never pass the quota."""
        hooks, owner = self._c("webhooks"), {"user_id": hook.user_id}
        if await self._c("users").find_one({"_id": hook.user_id}, {"_id": 1}) is None:
            raise Conflict("the webhook has no owner")  # SQLite: the foreign key refuses it
        if await hooks.count_documents(owner) >= max_webhooks:
            raise QuotaExceeded(f"this plan allows at most {max_webhooks} webhooks")
        await hooks.insert_one(_doc(hook))
        if await hooks.count_documents(owner) > max_webhooks:
            await hooks.delete_one({"_id": hook.id})
            raise QuotaExceeded(f"this plan allows at most {max_webhooks} webhooks")
        return hook

    @guarded
    async def list_webhooks(self, user_id: str) -> list[Webhook]:
        return [_hook(d) async for d in self._c("webhooks").find({"user_id": user_id}).sort(_ORDER)]

    @guarded
    async def get_webhook(self, user_id: str, webhook_id: str) -> Webhook | None:
        doc = await self._c("webhooks").find_one({"_id": webhook_id, "user_id": user_id})
        return None if doc is None else _hook(doc)

    @guarded
    async def delete_webhook(self, user_id: str, webhook_id: str) -> None:
        if not (await self._c("webhooks").delete_one({"_id": webhook_id, "user_id": user_id})).deleted_count:
            raise NotFound(f"no webhook {webhook_id!r}")
        await self._c("webhook_deliveries").delete_many({"webhook_id": webhook_id})

    @guarded
    async def due_webhooks(self, now: datetime) -> list[Webhook]:
        due = {"paused": False, "$or": [{"next_attempt": None}, {"next_attempt": {"$lte": now}}]}
        return [_hook(d) async for d in self._c("webhooks").find(due).sort(_ORDER)]

    @guarded
    async def claim(self, webhook_id: str, now: datetime, until: datetime) -> bool:
        free = {"$or": [{"claimed_until": None}, {"claimed_until": {"$lte": now}}]}
        done = await self._c("webhooks").update_one({"_id": webhook_id, **free}, {"$set": {"claimed_until": until}})
        return bool(done.modified_count)

    @guarded
    async def release(self, webhook_id: str) -> None:
        await self._c("webhooks").update_one({"_id": webhook_id}, {"$set": {"claimed_until": None}})

    @guarded
    async def save_state(self, hook: Webhook) -> None:
        doc = to_doc(hook)
        await self._c("webhooks").update_one({"_id": hook.id}, {"$set": {k: doc[k] for k in _STATE}})

    @guarded
    async def add_delivery(self, delivery: Delivery, keep: int) -> None:
        deliveries = self._c("webhook_deliveries")
        await deliveries.replace_one({"_id": delivery.id}, _doc(delivery), upsert=True)
        old = deliveries.find({"webhook_id": delivery.webhook_id}, {"_id": 1}).sort([("at", -1), ("_id", -1)])
        stale = [d["_id"] async for d in old.skip(keep)]
        if stale:
            await deliveries.delete_many({"_id": {"$in": stale}})

    @guarded
    async def recent_deliveries(self, webhook_id: str, limit: int) -> list[Delivery]:
        found = self._c("webhook_deliveries").find({"webhook_id": webhook_id}).sort([("at", -1), ("_id", -1)])
        return [from_doc(Delivery, {**d, "id": d["_id"]}) async for d in found.limit(limit)]
