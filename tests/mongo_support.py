"""Test-only helpers for the Mongo backend: an async adapter over mongomock-ng, and real-server plumbing.

``MongoStore`` is written against ``pymongo.AsyncMongoClient``. mongomock-ng is synchronous, so the
classes below expose the subset of the async API the store uses (awaitable collection methods, cursors
with ``sort``/``skip``/``limit``, ``to_list`` and ``async for``) and delegate to mongomock-ng. Each call
first yields to the event loop, so concurrent tasks interleave between database calls as they would on
a real server. When ``CTIWIRE_TEST_MONGODB_URI`` is set, the same tests also run on a real server, each
in a database of its own that is dropped afterwards.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import mongomock_ng
from mongomock_ng.filtering import filter_applies
from pymongo import AsyncMongoClient

from store.mongo import MongoStore, mongo_stores
from store.ports import Stores

NO_TEXT_ON_MOCK = "mongomock does not implement $text; runs with CTIWIRE_TEST_MONGODB_URI"
_SESSION = f"ctiwire_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
_COUNTER = itertools.count()


def real_mongodb_uri() -> str | None:
    """The real server to test against, if any."""
    return os.environ.get("CTIWIRE_TEST_MONGODB_URI") or None


def unique_db_name() -> str:
    """A database name unique to this test session and call."""
    return f"{_SESSION}_{next(_COUNTER)}"


class AsyncMockCursor:
    """``AsyncCursor`` / ``AsyncCommandCursor`` over a mongomock cursor (or any iterable of documents)."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def sort(self, *args: Any, **kwargs: Any) -> AsyncMockCursor:
        self._cursor = self._cursor.sort(*args, **kwargs)
        return self

    def hint(self, index: Any) -> AsyncMockCursor:
        return self  # mongomock has no query planner: an index hint changes nothing there

    def skip(self, count: int) -> AsyncMockCursor:
        self._cursor = self._cursor.skip(count)
        return self

    def limit(self, count: int) -> AsyncMockCursor:
        self._cursor = self._cursor.limit(count)
        return self

    async def to_list(self, length: int | None = None) -> list[dict[str, Any]]:
        await asyncio.sleep(0)
        docs: Iterator[dict[str, Any]] = iter(self._cursor)
        return list(docs if length is None else itertools.islice(docs, length))

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[dict[str, Any]]:
        for doc in self._cursor:
            await asyncio.sleep(0)
            yield doc


def _id_candidates(spec: Any) -> list[Any] | None:
    """The ``_id`` values a filter is limited to (``{"_id": v}`` or ``{"_id": {"$in": [...]}}``), or None."""
    if not isinstance(spec, dict) or "_id" not in spec:
        return None
    wanted = spec["_id"]
    if isinstance(wanted, dict):
        values = wanted.get("$in") if set(wanted) == {"$in"} else None
        return list(values) if isinstance(values, list | tuple) else None
    return [wanted] if isinstance(wanted, str | int) else None


def _with_id_lookup(collection: Any) -> Any:
    """Give a mongomock-ng collection the ``_id`` index a real server has.

    mongomock-ng scans every document for every filter, so a bulk upsert of n rows costs n^2 filter
    evaluations (seconds for a few thousand rows). Filters pinned to ``_id`` values look those documents
    up directly (they are stored by ``_id``) and evaluate the rest of the filter on them alone; every
    other filter keeps mongomock-ng's own scan. This relies on mongomock-ng internals (``_store``,
    ``_iter_documents``), pinned by pyproject.
    """
    if getattr(collection, "_id_lookup", False):
        return collection  # mongomock-ng hands out one collection per name: wrapped once, not once per handle
    scan = collection._iter_documents
    store = collection._store

    def iter_documents(spec: Any) -> Any:
        ids = _id_candidates(spec)
        if ids is None:
            return scan(spec)
        docs = [store[i] for i in dict.fromkeys(ids) if i in store]
        if set(spec) == {"_id"}:
            return iter(docs)
        return (doc for doc in docs if filter_applies(spec, doc))

    collection._iter_documents = iter_documents
    collection._id_lookup = True
    return collection


class AsyncMockCollection:
    """``AsyncCollection``: the awaitable methods MongoStore calls, run by mongomock-ng."""

    def __init__(self, collection: Any) -> None:
        self._sync = _with_id_lookup(collection)

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0)
        return getattr(self._sync, method)(*args, **kwargs)

    def find(self, *args: Any, **kwargs: Any) -> AsyncMockCursor:
        return AsyncMockCursor(self._sync.find(*args, **kwargs))

    async def aggregate(self, pipeline: list[dict[str, Any]], **kwargs: Any) -> AsyncMockCursor:
        return AsyncMockCursor(await self._call("aggregate", pipeline, **kwargs))

    async def find_one(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("find_one", *args, **kwargs)

    async def insert_one(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("insert_one", *args, **kwargs)

    async def replace_one(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("replace_one", *args, **kwargs)

    async def update_one(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("update_one", *args, **kwargs)

    async def delete_one(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("delete_one", *args, **kwargs)

    async def delete_many(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("delete_many", *args, **kwargs)

    async def bulk_write(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("bulk_write", *args, **kwargs)

    async def count_documents(self, *args: Any, **kwargs: Any) -> int:
        return int(await self._call("count_documents", *args, **kwargs))

    async def estimated_document_count(self, **kwargs: Any) -> int:
        return int(await self._call("estimated_document_count", **kwargs))

    async def create_index(self, *args: Any, **kwargs: Any) -> str:
        return str(await self._call("create_index", *args, **kwargs))

    async def find_one_and_update(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("find_one_and_update", *args, **kwargs)

    async def find_one_and_delete(self, *args: Any, **kwargs: Any) -> Any:
        return await self._call("find_one_and_delete", *args, **kwargs)

    async def index_information(self) -> dict[str, Any]:
        return dict(await self._call("index_information"))

    async def drop_index(self, name: str) -> None:
        await self._call("drop_index", name)


class AsyncMockDatabase:
    """``AsyncDatabase``: collections by item access and ``command``."""

    def __init__(self, database: Any) -> None:
        self._sync = database

    def __getitem__(self, name: str) -> AsyncMockCollection:
        return AsyncMockCollection(self._sync[name])

    async def command(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return dict(self._sync.command(*args, **kwargs))


class AsyncMockClient:
    """``AsyncMongoClient`` over one in-memory mongomock-ng server (``tz_aware`` like the real one)."""

    def __init__(self) -> None:
        self._sync = mongomock_ng.MongoClient(tz_aware=True)

    def __getitem__(self, name: str) -> AsyncMockDatabase:
        return AsyncMockDatabase(self._sync[name])

    async def drop_database(self, name: str) -> None:
        self._sync.drop_database(name)

    async def close(self) -> None:
        self._sync.close()


def mock_store() -> MongoStore:
    """A MongoStore on a fresh in-memory mongomock-ng server (not yet opened)."""
    return MongoStore(AsyncMockClient(), unique_db_name())  # type: ignore[arg-type]


def real_store(uri: str) -> MongoStore:
    """A MongoStore on a fresh database of the real server at ``uri`` (not yet opened)."""
    return MongoStore(_real_client(uri), unique_db_name())


def _real_client(uri: str) -> AsyncMongoClient[dict[str, Any]]:
    return AsyncMongoClient(uri, tz_aware=True, serverSelectionTimeoutMS=5000)


async def dispose(store: MongoStore) -> None:
    """Drop the store's database and close its client."""
    await store.client.drop_database(store.db_name)
    await store.close()


# The backends a test server runs on: SQLite and MongoStore over mongomock always, a real MongoDB
# when CTIWIRE_TEST_MONGODB_URI is set.
def server_backends() -> list[Any]:
    import pytest

    return [pytest.param("sqlite", id="sqlite"), pytest.param("mongomock", id="mongomock", marks=pytest.mark.mongo),
            *([pytest.param("mongodb", id="mongodb", marks=pytest.mark.mongo)] if real_mongodb_uri() else [])]


def backend_stores(backend: str) -> Stores | None:
    """The stores for ``backend`` (None: the settings' own SQLite stores), not yet opened."""
    if backend == "mongomock":
        return mongo_stores(AsyncMockClient(), unique_db_name())  # type: ignore[arg-type]
    if backend == "mongodb":
        return mongo_stores(_real_client(real_mongodb_uri() or ""), unique_db_name())
    return None


async def dispose_stores(stores: Stores) -> None:
    """Close ``stores``, dropping the database first when it is a Mongo one (each test has its own)."""
    if isinstance(stores.lifecycle, MongoStore):
        await dispose(stores.lifecycle)
    else:
        await stores.close()
