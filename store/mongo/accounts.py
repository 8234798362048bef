"""Accounts on MongoDB: users with their passwords and tiers, API keys, sessions, throttled attempts.

Sessions live in the database, so every server
process (and every API container) sees a sign-in and a sign-out at once; a throttled subject's document
expires by a TTL index a day after its last attempt (``store.mongo.indexes``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pymongo import ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from store.base import Conflict, NotFound, QuotaExceeded
from store.mongo.documents import Doc, from_keyed, keyed_doc
from store.mongo.errors import guarded
from store.mongo.usage import MongoUsage
from store.ports import AccountStore
from store.records import ApiKey, Session, User, ms, utcnow

Collection = AsyncCollection[dict[str, Any]]


async def with_owner(collection: Collection, match: dict[str, Any]) -> tuple[Doc, Doc] | None:
    """The one document of ``collection`` matching ``match`` and, by $lookup in the same round trip, the user
    it belongs to (``user_id``); None when either is missing (a key or session outliving its user)."""
    pipeline: list[dict[str, Any]] = [
        {"$match": match}, {"$limit": 1},
        {"$lookup": {"from": "users", "localField": "user_id", "foreignField": "_id", "as": "owner"}}]
    found = await (await collection.aggregate(pipeline)).to_list()
    if not found or not found[0]["owner"]:
        return None
    owner = found[0].pop("owner")[0]
    return found[0], owner


def by_hash(key_hash: str) -> Doc:
    """The key whose secret, or former secret during a rotation's grace, has this hash."""
    return {"$or": [{"key_hash": key_hash}, {"previous_hash": key_hash}]}


class MongoAccounts(MongoUsage, AccountStore):
    """Users, API keys, sessions, mailed links and throttled attempts (one object: deleting a user ends its
    keys, sessions and links)."""

    @guarded
    async def create_user(self, user: User) -> User:
        doc = keyed_doc(user)
        doc["email"] = user.email.lower()
        try:
            await self._c("users").insert_one(doc)
        except DuplicateKeyError as exc:
            raise Conflict(f"a user with e-mail {user.email!r} exists") from exc
        return user

    @guarded
    async def get_user(self, *, user_id: str | None = None, email: str | None = None) -> User:
        name, value = ("_id", user_id) if user_id is not None else ("email", (email or "").lower())
        doc = await self._c("users").find_one({name: value})
        if doc is None:
            raise NotFound(f"no user with {name.strip('_')} {value!r}")
        return from_keyed(User, doc)

    @guarded
    async def create_key(self, key: ApiKey, max_keys: int) -> ApiKey:
        """Count, insert, count again: two concurrent creations that would pass the quota together both
        see the second count above it and withdraw their own key, so the quota is never exceeded (at
        worst both are refused and a retry succeeds). No transaction needed, so no replica set either."""
        keys = self._c("api_keys")
        if await self._c("users").find_one({"_id": key.user_id}, {"_id": 1}) is None:
            raise Conflict(f"no user {key.user_id!r} to own the key")  # SQLite: the foreign key refuses it
        if await keys.count_documents({"user_id": key.user_id}) >= max_keys:
            raise QuotaExceeded(f"this plan allows at most {max_keys} API keys")
        try:
            await keys.insert_one(keyed_doc(key))
        except DuplicateKeyError as exc:
            raise Conflict(f"a key named {key.name!r} exists") from exc
        if await keys.count_documents({"user_id": key.user_id}) > max_keys:
            await keys.delete_one({"_id": key.id})
            raise QuotaExceeded(f"this plan allows at most {max_keys} API keys")
        return key

    @guarded
    async def key_by_hash(self, key_hash: str) -> ApiKey | None:
        doc = await self._c("api_keys").find_one(by_hash(key_hash))
        return None if doc is None else from_keyed(ApiKey, doc)

    @guarded
    async def key_with_user(self, key_hash: str) -> tuple[ApiKey, User] | None:
        """One round trip per authenticated request: the key and, by $lookup, its owner."""
        found = await with_owner(self._c("api_keys"), by_hash(key_hash))
        return None if found is None else (from_keyed(ApiKey, found[0]), from_keyed(User, found[1]))

    @guarded
    async def list_keys(self, user_id: str) -> list[ApiKey]:
        cursor = self._c("api_keys").find({"user_id": user_id}).sort([("created_at", 1), ("name", 1)])
        return [from_keyed(ApiKey, d) async for d in cursor]

    @guarded
    async def delete_key(self, user_id: str, name: str) -> None:
        keys = self._c("api_keys")
        doc = await keys.find_one({"user_id": user_id, "name": name})
        if doc is None:
            raise NotFound(f"no key named {name!r}")
        # Revoked first: the hash is never both gone and unknown (expired_api_key, not invalid_api_key).
        await self.revoke(doc["key_hash"], doc.get("previous_hash"))
        if not (await keys.delete_one({"_id": doc["_id"]})).deleted_count:
            raise NotFound(f"no key named {name!r}")

    @guarded
    async def set_key_active(self, user_id: str, name: str, active: bool) -> None:
        change = {"active": True, "pending": False} if active else {"active": False}  # activating delivers
        result = await self._c("api_keys").update_one({"user_id": user_id, "name": name}, {"$set": change})
        if not result.matched_count:
            raise NotFound(f"no key named {name!r}")

    @guarded
    async def is_revoked(self, key_hash: str) -> bool:
        return await self._c("revoked_keys").find_one({"_id": key_hash}) is not None

    @guarded
    async def list_users(self) -> list[User]:
        return [from_keyed(User, d) async for d in self._c("users").find().sort("email", 1)]

    @guarded
    async def update_user(self, user: User) -> None:
        changes = {"tier": user.tier, "password_hash": user.password_hash, "unverified": user.unverified}
        result = await self._c("users").update_one({"_id": user.id}, {"$set": changes})
        if not result.matched_count:
            raise NotFound(f"no user with id {user.id!r}")

    @guarded
    async def delete_user(self, user_id: str) -> None:
        async for doc in self._c("api_keys").find({"user_id": user_id}):
            await self.revoke(doc["key_hash"], doc.get("previous_hash"))  # a deleted account's keys: expired
        await self._c("api_keys").delete_many({"user_id": user_id})
        await self._c("sessions").delete_many({"user_id": user_id})
        await self._c("mail_tokens").delete_many({"user_id": user_id})
        await self._c("feeds").delete_many({"user_id": user_id})  # as SQLite's foreign key cascade does
        await self._c("allowlist").delete_many({"user_id": user_id})
        hooks = [d["_id"] async for d in self._c("webhooks").find({"user_id": user_id}, {"_id": 1})]
        await self._c("webhook_deliveries").delete_many({"webhook_id": {"$in": hooks}})
        await self._c("webhooks").delete_many({"user_id": user_id})
        if not (await self._c("users").delete_one({"_id": user_id})).deleted_count:
            raise NotFound(f"no user with id {user_id!r}")

    @guarded
    async def create_session(self, session: Session) -> None:
        await self._c("sessions").insert_one(keyed_doc(session))

    @guarded
    async def session_with_user(self, session_id: str) -> tuple[Session, User] | None:
        found = await with_owner(self._c("sessions"), {"_id": session_id})
        return None if found is None else (from_keyed(Session, found[0]), from_keyed(User, found[1]))

    @guarded
    async def touch_session(self, session_id: str, at: datetime) -> None:
        await self._c("sessions").update_one({"_id": session_id}, {"$set": {"last_seen_at": at}})

    @guarded
    async def delete_sessions(self, *, session_id: str | None = None, user_id: str | None = None) -> int:
        query = {"_id": session_id} if session_id is not None else {"user_id": user_id}
        return (await self._c("sessions").delete_many(query)).deleted_count

    @guarded
    async def save_token(self, token_hash: str, purpose: str, user_id: str, expires_at: datetime) -> None:
        await self._c("mail_tokens").insert_one(
            {"_id": token_hash, "purpose": purpose, "user_id": user_id, "expires_at": expires_at})

    @guarded
    async def take_token(self, token_hash: str, purpose: str, now: datetime) -> str | None:
        # find_one_and_delete is atomic on the document: of two requests with one link, one gets it.
        found = await self._c("mail_tokens").find_one_and_delete({"_id": token_hash, "purpose": purpose})
        if found is None:
            return None
        await self._c("mail_tokens").delete_many({"user_id": found["user_id"], "purpose": purpose})
        return str(found["user_id"]) if ms(found["expires_at"]) > now else None

    @guarded
    async def reserve_attempt(self, limits: Sequence[tuple[str, int]], since: datetime, at: datetime
                              ) -> datetime | None:
        # One document per subject; a slot is taken by one conditional update (atomic on the document), and
        # taken slots are given back when a later subject is full. The give-back may make a racing attempt
        # see a subject full that is not: a refusal too many, never an attempt past the limit.
        token, taken = uuid.uuid4().hex, list[str]()
        for subject, limit in limits:
            if not await self._take_slot(subject, limit, since, {"at": at, "token": token}):
                for earlier in taken:
                    await self._c("attempts").update_one({"_id": earlier}, {"$pull": {"times": {"token": token}}})
                full = [when for s, n in limits if (when := await self._limit_th(s, n)) is not None]
                return max(full, default=since)
            taken.append(subject)
        return None

    async def _take_slot(self, subject: str, limit: int, since: datetime, attempt: dict[str, Any]) -> bool:
        attempts = self._c("attempts")
        await attempts.update_one({"_id": subject}, {"$pull": {"times": {"at": {"$lte": since}}}}, upsert=True)
        taken = await attempts.find_one_and_update(
            {"_id": subject, f"times.{limit - 1}": {"$exists": False}},
            {"$push": {"times": attempt}, "$currentDate": {"seen": True}})  # the TTL's clock: the server's
        return taken is not None

    async def _limit_th(self, subject: str, limit: int) -> datetime | None:
        found = await self._c("attempts").find_one({"_id": subject})
        times = sorted(ms(t["at"]) for t in (found or {}).get("times", []))  # naive UTC from BSON
        return times[-limit] if len(times) >= limit else None

    @guarded
    async def clear_attempts(self, subject: str) -> None:
        await self._c("attempts").delete_one({"_id": subject})

    @guarded
    async def touch_key(self, key_id: str, at: datetime) -> None:
        await self._c("api_keys").update_one({"_id": key_id}, {"$set": {"last_used_at": at}})

    @guarded
    async def set_key_scopes(self, user_id: str, name: str, scopes: list[str]) -> None:
        result = await self._c("api_keys").update_one({"user_id": user_id, "name": name}, {"$set": {"scopes": scopes}})
        if not result.matched_count:
            raise NotFound(f"no key named {name!r}")

    async def revoke(self, *key_hashes: str | None) -> None:
        """Remember deleted or replaced secrets: they answer ``expired_api_key``, not ``invalid_api_key``."""
        for key_hash in key_hashes:
            if key_hash is not None:
                await self._c("revoked_keys").update_one({"_id": key_hash}, {"$set": {"revoked_at": utcnow()}},
                                                         upsert=True)

    @guarded
    async def rotate_key(self, user_id: str, name: str, key_hash: str, prefix: str,
                         previous_expires_at: datetime) -> ApiKey:
        keys = self._c("api_keys")
        doc = await keys.find_one({"user_id": user_id, "name": name})
        if doc is None:
            raise NotFound(f"no key named {name!r}")
        await self.revoke(doc.get("previous_hash"))  # the secret before the previous one: its grace ends now
        change = {"previous_hash": doc["key_hash"], "previous_expires_at": previous_expires_at,
                  "key_hash": key_hash, "prefix": prefix, "pending": True}
        # Only if no other rotation came between: the hash read above is the one moved aside.
        updated = await keys.find_one_and_update({"_id": doc["_id"], "key_hash": doc["key_hash"]}, {"$set": change},
                                                 return_document=ReturnDocument.AFTER)
        if updated is None:
            raise Conflict(f"key {name!r} was rotated at the same moment; try again")
        return from_keyed(ApiKey, updated)

    @guarded
    async def rename_key(self, user_id: str, name: str, new_name: str) -> None:
        try:
            result = await self._c("api_keys").update_one({"user_id": user_id, "name": name},
                                                          {"$set": {"name": new_name}})
        except DuplicateKeyError as exc:
            raise Conflict(f"a key named {new_name!r} exists") from exc
        if not result.matched_count:
            raise NotFound(f"no key named {name!r}")
