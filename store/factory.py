"""Choose the backends from configuration alone (ARCHITECTURE.md, "Two ways to run, one code path")."""

from __future__ import annotations

from config.settings import Settings
from store.cache import Cache, MemoryCache, NullCache, RedisCache
from store.ports import Stores


def make_stores(settings: Settings) -> Stores:
    """MongoDB when ``CTIWIRE_MONGODB_URI`` is set, else SQLite under ``CTIWIRE_DATA_DIR`` (not yet opened)."""
    if settings.mongodb_uri:
        from pymongo import AsyncMongoClient

        from store.mongo import mongo_stores

        client: AsyncMongoClient[dict[str, object]] = AsyncMongoClient(settings.mongodb_uri, tz_aware=True)
        return mongo_stores(client, settings.mongodb_db)
    from store.sqlite import sqlite_stores

    return sqlite_stores(settings.sqlite_path)


def make_cache(settings: Settings) -> Cache:
    """Redis when ``CTIWIRE_REDIS_URL`` is set, else a bounded in-process cache."""
    if not settings.cache_enabled:
        return NullCache()
    near = MemoryCache(settings.cache_max_entries, settings.cache_max_bytes)
    return RedisCache(settings.redis_url, near=near) if settings.redis_url else near
