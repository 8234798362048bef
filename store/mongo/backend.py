"""MongoStore: the server backend, on PyMongo's own async API (``pymongo.AsyncMongoClient``; Motor is
deprecated). Behaviour is the SQLite backend's, method for method; ``tests/conformance`` checks it.

Collections: ``articles``, ``iocs``, ``sources``, ``users``, ``api_keys``, ``revoked_keys`` (deleted key
hashes, for ``expired_api_key``), ``meta`` (the data version, bumped with ``$inc``)
and ``key_usage`` (the usage history, ``store.mongo.usage``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import datetime
from typing import Any

from pymongo import AsyncMongoClient, ReplaceOne
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from store.base import Conflict, IocStats, NotFound, QuotaExceeded, Store, keyset_pages
from store.mongo import iocs as ioc_ops
from store.mongo.accounts import MongoAccounts, by_hash, with_owner
from store.mongo.documents import Doc, article_doc, from_ioc, from_keyed, from_source, ioc_key, keyed_doc, source_doc
from store.mongo.errors import guarded, translated
from store.mongo.indexes import INDEXES
from store.mongo.queries import IOC_SORT, article_query, article_sort, ioc_filter
from store.mongo.usage import MongoUsage
from store.query import ArticleQuery, IocQuery
from store.records import ApiKey, Article, Ioc, Source, User

Collection = AsyncCollection[dict[str, Any]]
_ESTIMATE_CAP = 10_000  # the "planned" count stops here, as the SQLite backend's does


class MongoStore(MongoAccounts, MongoUsage, Store):
    """Store on one MongoDB database; indexes (text index included) are created by ``open``."""

    name = "mongodb"

    def __init__(self, client: AsyncMongoClient[dict[str, Any]], db_name: str) -> None:
        self.client = client
        self.db_name = db_name
        self.db = client[db_name]

    def _c(self, name: str) -> Collection:
        return self.db[name]

    # -- lifecycle ---------------------------------------------------------------------------
    @guarded
    async def open(self) -> None:
        for spec in INDEXES:
            await self._c(spec.collection).create_index(spec.keys, **spec.options)
        await ioc_ops.backfill_stix_ids(self._c("iocs"))  # documents from before the field was written

    async def close(self) -> None:
        await self.client.close()

    @guarded
    async def ping(self) -> dict[str, Any]:
        await self.db.command("ping")
        return {"backend": self.name, "database": self.db_name}

    # -- data version ------------------------------------------------------------------------
    @guarded
    async def data_version(self) -> int:
        doc = await self._c("meta").find_one({"_id": "data_version"})
        return 0 if doc is None else int(doc["value"])

    async def _bump(self) -> None:
        """After the write, even a partial one: a cache entry built in between is keyed by the old version
        yet holds newer rows (harmless), never the reverse. No transaction, so no replica set needed."""
        await self._c("meta").update_one({"_id": "data_version"}, {"$inc": {"value": 1}}, upsert=True)

    # -- users and keys ----------------------------------------------------------------------
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

    # -- articles ----------------------------------------------------------------------------
    @guarded
    async def upsert_articles(self, articles: Sequence[Article]) -> int:
        if not articles:
            return 0
        ops = [ReplaceOne({"_id": a.id}, article_doc(a), upsert=True) for a in articles]
        # Ordered, so a later copy of an id in the batch wins, as in the SQLite backend. The server does
        # not count a replacement by an identical document as modified: unchanged rows count 0.
        try:
            result = await self._c("articles").bulk_write(ops, ordered=True)
        finally:
            await self._bump()
        return result.upserted_count + result.modified_count

    @guarded
    async def get_article(self, article_id: str) -> Article:
        doc = await self._c("articles").find_one({"_id": article_id})
        if doc is None:
            raise NotFound(f"no article {article_id!r}")
        return from_keyed(Article, doc)

    @guarded
    async def find_article(self, *, canonical_url: str | None = None,
                           content_hash: str | None = None) -> Article | None:
        name, value = ("canonical_url", canonical_url) if canonical_url else ("content_hash", content_hash)
        if value is None:
            return None
        doc = await self._c("articles").find_one({name: value})
        return None if doc is None else from_keyed(Article, doc)

    async def _article_page(self, q: ArticleQuery, size: int) -> list[Article]:
        cursor = self._c("articles").find(article_query(q)).sort(article_sort(q)).skip(q.offset).limit(size)
        with translated():
            return [from_keyed(Article, d) for d in await cursor.to_list()]

    def iter_articles(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[Article]]:
        return keyset_pages(query, batch_size, self._article_page, lambda a: (getattr(a, query.sort_field), a.id))

    @guarded
    async def count_articles(self, query: ArticleQuery, exact: bool) -> int:
        where = article_query(dataclasses.replace(query, after=None))
        if exact:
            return await self._c("articles").count_documents(where)
        # A planned estimate: count at most 10,000 matches (a lower bound), like the SQLite backend.
        return await self._c("articles").count_documents(where, limit=_ESTIMATE_CAP)

    @guarded
    async def article_refs(self, ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        wanted = list(dict.fromkeys(ids))
        projection = {"title": 1, "url": 1, "source_name": 1}
        cursor = self._c("articles").find({"_id": {"$in": wanted}}, projection)
        return {d["_id"]: (d["title"], d["url"], d["source_name"]) async for d in cursor}

    @guarded
    async def article_sources(self) -> list[tuple[str, str, int, int]]:
        group = {"name": "$source_name", "type": "$source_type", "tier": "$source_tier"}
        pipeline: list[Doc] = [{"$group": {"_id": group, "n": {"$sum": 1}}},
                               {"$sort": {"_id.name": 1, "_id.type": 1, "_id.tier": 1}}]
        rows = await (await self._c("articles").aggregate(pipeline)).to_list()
        return [(r["_id"]["name"], r["_id"]["type"], int(r["_id"]["tier"]), int(r["n"])) for r in rows]

    # -- IOCs --------------------------------------------------------------------------------
    @guarded
    async def upsert_iocs(self, iocs: Iterable[Ioc]) -> int:
        incoming = list(iocs)
        if not incoming:
            return 0
        try:
            await ioc_ops.upsert(self._c("iocs"), incoming)
        finally:
            await self._bump()
        return len(incoming)

    @guarded
    async def replace_iocs(self, iocs: Iterable[Ioc]) -> int:
        try:
            return await ioc_ops.replace_all(self._c("iocs"), iocs)
        finally:
            await self._bump()

    async def _ioc_page(self, q: IocQuery, size: int) -> list[Ioc]:
        cursor = self._c("iocs").find(ioc_filter(q)).sort(IOC_SORT).skip(q.offset).limit(size)
        with translated():
            return [from_ioc(d) for d in await cursor.to_list()]

    def iter_iocs(self, query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[Ioc]]:
        return keyset_pages(query, batch_size, self._ioc_page, lambda i: (i.first_seen, i.type, i.value))

    @guarded
    async def count_iocs(self, query: IocQuery) -> int:
        return await self._c("iocs").count_documents(ioc_filter(dataclasses.replace(query, after=None)))

    @guarded
    async def get_ioc(self, ioc_type: str, value: str) -> Ioc | None:
        doc = await self._c("iocs").find_one({"_id": ioc_key(ioc_type, value)})
        return None if doc is None else from_ioc(doc)

    @guarded
    async def ioc_stats(self, since: datetime, top: int = 10) -> IocStats:
        return await ioc_ops.stats(self._c("iocs"), since, top)

    # -- sources -----------------------------------------------------------------------------
    @guarded
    async def upsert_source(self, source: Source) -> None:
        await self._c("sources").replace_one({"_id": source.name}, source_doc(source), upsert=True)

    @guarded
    async def list_sources(self) -> list[Source]:
        return [from_source(d) async for d in self._c("sources").find({}).sort([("_id", 1)])]
