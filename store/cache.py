"""The cache: in-process (bounded, TTL) in the embedded mode, Redis in production.

Both hold bytes under string keys. ``rename`` moves a finished build over the live key in one step,
so a reader never sees half an export (ARCHITECTURE.md, "Bulk exports and stats").
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import hashlib
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Hashable
from typing import Any, Generic, TypeVar

from store.base import StoreUnavailable

V = TypeVar("V")


def body_etag(body: bytes) -> str:
    """Tornado's own ETag of a body (``RequestHandler.compute_etag``), for a body kept and served many
    times: computed once when kept, not hashed again on every response."""
    return '"' + hashlib.sha1(body, usedforsecurity=False).hexdigest() + '"'


class NearMap(Generic[V]):
    """Small values kept in this process under keys that name their data version: a held value
    can never be stale, so there is no expiry, only a bound; the oldest entry leaves first."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self._values: dict[Hashable, V] = {}

    def get(self, key: Hashable) -> V | None:
        return self._values.get(key)

    def put(self, key: Hashable, value: V) -> None:
        if self.entries <= 0:
            return
        if key not in self._values and len(self._values) >= self.entries:
            self._values.pop(next(iter(self._values)))
        self._values[key] = value


# The largest value worth keeping near (a small export entry, a TAXII page): larger ones are read each time.
NEAR_MAX_BYTES = 256 * 1024
_near_maps: weakref.WeakKeyDictionary[Cache, dict[str, NearMap[Any]]] = weakref.WeakKeyDictionary()


def near_map(cache: Cache, name: str, entries: int) -> NearMap[Any]:
    """This process's map ``name`` beside ``cache`` (its IOC pages, TAXII pages, small entries): a server's
    maps live and die with its cache. A disabled cache (``NullCache``) keeps nothing near either."""
    maps = _near_maps.setdefault(cache, {})
    if name not in maps:
        maps[name] = NearMap(entries if cache.keeps_near else 0)
    return maps[name]


class Cache(abc.ABC):
    """Bytes under keys, with expiry."""

    name = "abstract"
    keeps_near = True  # whether values under versioned keys may also be kept in the process (near_map)

    @abc.abstractmethod
    async def get(self, key: str) -> bytes | None:
        """The value, or None when missing or expired."""

    @abc.abstractmethod
    async def set(self, key: str, value: bytes, ttl: int | None = None) -> None:
        """Store ``value``; ``ttl`` seconds of life (None: until evicted)."""

    @abc.abstractmethod
    async def delete(self, key: str) -> None:
        """Remove ``key`` if present."""

    @abc.abstractmethod
    async def rename(self, src: str, dst: str) -> None:
        """Atomically move ``src`` over ``dst``."""

    @abc.abstractmethod
    async def ping(self) -> dict[str, Any]:
        """Health facts; raises StoreUnavailable when the cache does not answer."""

    @abc.abstractmethod
    def lock(self, name: str, ttl: float, wait: float) -> contextlib.AbstractAsyncContextManager[bool]:
        """Hold the lock ``name`` for at most ``ttl`` seconds; yields False if not acquired within ``wait``."""

    async def close(self) -> None:  # noqa: B027 - optional hook: only networked caches hold connections
        """Release connections."""


class MemoryCache(Cache):
    """An LRU with per-entry expiry for one process, bounded in entries and in bytes (bulk exports are
    megabytes each: an entry bound alone would let the embedded server's memory grow with the data)."""

    name = "memory"

    def __init__(self, max_entries: int = 256, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._bytes = 0
        self._data: OrderedDict[str, tuple[bytes, float | None]] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    @contextlib.asynccontextmanager
    async def lock(self, name: str, ttl: float, wait: float) -> AsyncIterator[bool]:
        lock = self._locks.setdefault(name, asyncio.Lock())
        try:
            async with asyncio.timeout(wait):  # acquire() registers as a waiter at once, before any await
                await lock.acquire()
        except TimeoutError:
            yield False
            return
        try:
            yield True
        finally:
            lock.release()
            if not lock.locked() and not getattr(lock, "_waiters", None):
                self._locks.pop(name, None)

    async def get(self, key: str) -> bytes | None:
        item = self._data.get(key)
        if item is None:
            return None
        value, expires = item
        if expires is not None and expires < time.monotonic():
            self._drop(key)
            return None
        self._data.move_to_end(key)
        return value

    async def set(self, key: str, value: bytes, ttl: int | None = None) -> None:
        self._drop(key)
        if len(value) > self.max_bytes:
            return  # larger than the whole cache: served built, never kept
        self._data[key] = (value, None if ttl is None else time.monotonic() + ttl)
        self._bytes += len(value)
        while len(self._data) > self.max_entries or self._bytes > self.max_bytes:
            self._drop(next(iter(self._data)))

    def _drop(self, key: str) -> None:
        item = self._data.pop(key, None)
        if item is not None:
            self._bytes -= len(item[0])

    async def delete(self, key: str) -> None:
        self._drop(key)

    async def rename(self, src: str, dst: str) -> None:
        if src in self._data:
            self._drop(dst)
            self._data[dst] = self._data.pop(src)
            self._data.move_to_end(dst)

    async def ping(self) -> dict[str, Any]:
        return {"cache": self.name, "entries": len(self._data), "max_entries": self.max_entries,
                "bytes": self._bytes, "max_bytes": self.max_bytes}


# Near copies (RedisCache.get): values this large are kept in the process; the first NEAR_HEAD bytes
# validate them, and NEAR_TTL_SECONDS bounds how long one is kept without being read again.
NEAR_MIN_BYTES = 64 * 1024
NEAR_HEAD = 512
NEAR_TTL_SECONDS = 300


class RedisCache(Cache):
    """Redis through ``redis.asyncio``; every operation fails fast when Redis is down."""

    name = "redis"

    def __init__(self, url: str, timeout: float = 2.0, near: MemoryCache | None = None) -> None:
        import redis.asyncio as aioredis

        self.url = url
        self.client = aioredis.from_url(  # type: ignore[no-untyped-call]
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self.near = near

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        import redis.exceptions

        try:
            return await getattr(self.client, method)(*args, **kwargs)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise StoreUnavailable(f"Redis: {exc}") from exc

    async def get(self, key: str) -> bytes | None:
        """The value; a large one from this process's near copy while Redis's head of it still matches.

        Every value written here begins with a digest of its content (an entry's ETag, a TAXII page's
        hash; exporters.build_once, taxii.page_cache), so equal heads mean equal values: a hit on a
        megabytes-long export moves ``NEAR_HEAD`` bytes from Redis instead of all of them, and a
        replaced or expired key is still seen at once, as is Redis being down.
        """
        copy = await self.near.get(key) if self.near is not None else None
        if copy is not None:
            head = await self._call("getrange", key, 0, NEAR_HEAD - 1)
            if head == copy[:NEAR_HEAD]:
                return copy
        value = await self._call("get", key)
        if value is None:
            return None
        if self.near is not None and len(value) >= NEAR_MIN_BYTES:
            await self.near.set(key, value, NEAR_TTL_SECONDS)
        return bytes(value)

    async def set(self, key: str, value: bytes, ttl: int | None = None) -> None:
        await self._call("set", key, value, ex=ttl)

    async def delete(self, key: str) -> None:
        await self._call("delete", key)

    async def rename(self, src: str, dst: str) -> None:
        await self._call("rename", src, dst)

    async def ping(self) -> dict[str, Any]:
        await self._call("ping")
        return {"cache": self.name}

    @contextlib.asynccontextmanager
    async def lock(self, name: str, ttl: float, wait: float) -> AsyncIterator[bool]:
        """A Redis lock (SET NX PX with a token, released by a Lua check-and-delete), shared by all processes."""
        import redis.exceptions

        lock = self.client.lock(f"lock:{name}", timeout=ttl, blocking_timeout=wait)
        try:
            acquired = bool(await lock.acquire(blocking=wait > 0))
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise StoreUnavailable(f"Redis: {exc}") from exc
        # The holder extends the lock while it works, so the TTL can be short: a holder that dies stops
        # extending and the lock is free again within ``ttl``, whatever a build takes.
        renewer = asyncio.create_task(_keep_extending(lock, ttl)) if acquired else None
        try:
            yield acquired
        finally:
            if renewer is not None:
                renewer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await renewer
                with contextlib.suppress(redis.exceptions.RedisError, OSError):
                    await lock.release()

    async def close(self) -> None:
        await self.client.aclose()


class NullCache(Cache):
    """No caching at all (``CTIWIRE_CACHE_ENABLED=false``): every request builds; for benchmarks and debugging."""

    name = "none"
    keeps_near = False

    async def get(self, key: str) -> bytes | None:
        return None

    async def set(self, key: str, value: bytes, ttl: int | None = None) -> None:
        return None

    async def delete(self, key: str) -> None:
        return None

    async def rename(self, src: str, dst: str) -> None:
        return None

    async def ping(self) -> dict[str, Any]:
        return {"cache": self.name}

    @contextlib.asynccontextmanager
    async def lock(self, name: str, ttl: float, wait: float) -> AsyncIterator[bool]:
        # Always held: with nothing cached there is no build to wait for. (Never held, it made every
        # caller of exporters.build_once.get_or_build spin on the event loop for its whole wait, 120 s.)
        yield True


async def _keep_extending(lock: Any, ttl: float) -> None:
    """Reset the lock's TTL every third of it until cancelled (a lost lock is left to expire)."""
    import redis.exceptions

    while True:
        await asyncio.sleep(ttl / 3)
        try:
            await lock.reacquire()
        except (redis.exceptions.RedisError, OSError):
            return
