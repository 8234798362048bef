"""Choose the backends from configuration alone (ARCHITECTURE.md, "Two ways to run, one code path")."""

from __future__ import annotations

from config.settings import Settings
from store.base import Store
from store.cache import Cache, MemoryCache, NullCache, RedisCache


def make_store(settings: Settings) -> Store:
    """MongoDB when ``CTIWIRE_MONGODB_URI`` is set, else SQLite under ``CTIWIRE_DATA_DIR``."""
    if settings.mongodb_uri:
        from pymongo import AsyncMongoClient

        from store.mongo import MongoStore

        client: AsyncMongoClient[dict[str, object]] = AsyncMongoClient(settings.mongodb_uri, tz_aware=True)
        return MongoStore(client, settings.mongodb_db)
    from store.sqlite import SqliteStore

    return SqliteStore(settings.sqlite_path)


def make_cache(settings: Settings) -> Cache:
    """Redis when ``CTIWIRE_REDIS_URL`` is set, else a bounded in-process cache."""
    if not settings.cache_enabled:
        return NullCache()
    near = MemoryCache(settings.cache_max_entries, settings.cache_max_bytes)
    return RedisCache(settings.redis_url, near=near) if settings.redis_url else near
