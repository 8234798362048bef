"""Choose the backends from configuration alone (ARCHITECTURE.md, "Two ways to run, one code path")."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from config.settings import Settings
from store import decay
from store.cache import Cache, MemoryCache, NullCache, RedisCache
from store.ports import EventLog, Stores


def make_stores(settings: Settings) -> Stores:
    """MongoDB when ``CTIWIRE_MONGODB_URI`` is set, else SQLite under ``CTIWIRE_DATA_DIR`` (not yet opened).

    The live feed's log (README, "Live stream"): a Redis Stream when Redis is configured, shared by every
    process on every host; else the SQLite backend's events table; MongoDB without Redis keeps its events
    in an SQLite file in the data dir, so only the processes of this host share them.
    """
    retention = timedelta(days=settings.stream_retention_days)
    decay.configure(decay.DecayModel.from_settings(settings))
    if settings.mongodb_uri:
        from pymongo import AsyncMongoClient

        from store.mongo import mongo_stores

        client: AsyncMongoClient[dict[str, object]] = AsyncMongoClient(settings.mongodb_uri, tz_aware=True)
        stores = mongo_stores(client, settings.mongodb_db)
    else:
        from store.sqlite import sqlite_stores

        stores = sqlite_stores(settings.sqlite_path, retention, settings.sqlite_bulk_cache_mb)
    return dataclasses.replace(stores, events=_event_log(settings, stores, retention))


def _event_log(settings: Settings, stores: Stores, retention: timedelta) -> EventLog:
    if settings.redis_url:
        from store.redis_events import RedisEventLog

        return RedisEventLog(settings.redis_url, retention)
    if settings.mongodb_uri:
        from store.sqlite import SqliteEventLog

        return SqliteEventLog.in_file(settings.data_dir / "events.sqlite3", retention)
    return stores.events


def make_cache(settings: Settings) -> Cache:
    """Redis when ``CTIWIRE_REDIS_URL`` is set, else a bounded in-process cache."""
    if not settings.cache_enabled:
        return NullCache()
    near = MemoryCache(settings.cache_max_entries, settings.cache_max_bytes)
    return RedisCache(settings.redis_url, near=near) if settings.redis_url else near
