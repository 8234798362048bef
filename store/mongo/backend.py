"""MongoStore: the server backend's database, which its concerns (``MongoArticles``, ``MongoIocs``,
``MongoSources``, ``MongoAccounts``) share, on PyMongo's own async API (``pymongo.AsyncMongoClient``; Motor is
deprecated). Behaviour is the SQLite backend's, method for method; ``tests/conformance`` checks it.

Collections: ``articles``, ``iocs``, ``sources``, ``users``, ``api_keys``, ``revoked_keys`` (deleted key
hashes, for ``expired_api_key``), ``feeds`` (saved feeds) and ``meta`` (the data version, bumped with ``$inc``).
"""

from __future__ import annotations

from typing import Any

from pymongo import AsyncMongoClient
from pymongo.asynchronous.collection import AsyncCollection

from store.mongo import ioc_counters
from store.mongo import iocs as ioc_ops
from store.mongo.errors import guarded
from store.mongo.indexes import INDEXES, RETIRED_INDEXES
from store.ports import Lifecycle

Collection = AsyncCollection[dict[str, Any]]


class MongoStore(Lifecycle):
    """One MongoDB database: its client, indexes (text index included, created by ``open``) and data version."""

    name = "mongodb"

    def __init__(self, client: AsyncMongoClient[dict[str, Any]], db_name: str) -> None:
        self.client = client
        self.db_name = db_name
        self.db = client[db_name]

    def _c(self, name: str) -> Collection:
        return self.db[name]

    @guarded
    async def open(self) -> None:
        for spec in INDEXES:
            await self._c(spec.collection).create_index(spec.keys, **spec.options)
        for collection, name in RETIRED_INDEXES:
            if name in await self._c(collection).index_information():
                await self._c(collection).drop_index(name)
        await ioc_ops.backfill_stix_ids(self._c("iocs"))  # documents from before the field was written
        await ioc_ops.backfill_lifecycle(self._c("iocs"))
        await ioc_ops.backfill_links(self._c("iocs"), self._c("ioc_links"))  # and before the link relation
        await ioc_counters.backfill(self._c("iocs"), self._c("ioc_counters"), self._c("meta"))  # and the counters

    async def close(self) -> None:
        await self.client.close()

    @guarded
    async def ping(self) -> dict[str, Any]:
        await self.db.command("ping")
        return {"backend": self.name, "database": self.db_name}

    @guarded
    async def data_version(self) -> int:
        doc = await self._c("meta").find_one({"_id": "data_version"})
        return 0 if doc is None else int(doc["value"])

    async def _bump(self) -> None:
        """After the write, even a partial one: a cache entry built in between is keyed by the old version
        yet holds newer rows (harmless), never the reverse. No transaction, so no replica set needed."""
        await self._c("meta").update_one({"_id": "data_version"}, {"$inc": {"value": 1}}, upsert=True)
