"""The cache's build-once discipline: one build for concurrent misses, atomic entries, bypass when down."""

from __future__ import annotations

import asyncio

import pytest

from exporters.build_once import Entry, get_or_build, make_entry, near_or_build, read_entry, store_entry
from store.base import StoreUnavailable
from store.cache import NEAR_MAX_BYTES, MemoryCache, NullCache, RedisCache


def _cache(kind: str, redis_url: str | None):
    return MemoryCache(16) if kind == "memory" else RedisCache(redis_url or "")


@pytest.fixture(params=["memory", "redis"])
def cache_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _twenty_concurrent(cache) -> tuple[int, list[str], set[bytes]]:
    builds = 0

    async def build() -> Entry:
        nonlocal builds
        builds += 1
        await asyncio.sleep(0.2)
        return make_entry(b"body-" + str(builds).encode(), 1, 7, "text/plain", "x.txt")

    results = await asyncio.gather(*(get_or_build(cache, "k1", build, ttl=60, wait=10) for _ in range(20)))
    return builds, [status for _, status in results], {entry.body for entry, _ in results}


async def test_twenty_concurrent_misses_build_once(cache_kind: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("redis_server").url if cache_kind == "redis" else None
    cache = _cache(cache_kind, url)
    try:
        await cache.delete("k1")
        builds, statuses, bodies = await _twenty_concurrent(cache)
        assert builds == 1
        assert statuses.count("miss") == 1 and statuses.count("hit") == 19
        assert bodies == {b"body-1"}
        stored = await read_entry(cache, "k1")
        assert stored is not None and stored.meta.data_version == 7 and stored.meta.rows == 1
    finally:
        await cache.close()


async def test_cache_down_builds_directly() -> None:
    cache = RedisCache("redis://127.0.0.1:1/0", timeout=0.5)
    entry, status = await get_or_build(cache, "k", lambda: _const(b"x"), ttl=5)
    assert status == "bypass" and entry.body == b"x"
    with pytest.raises(StoreUnavailable):
        await cache.ping()
    await cache.close()


async def test_with_the_cache_disabled_every_request_builds_at_once() -> None:
    """CTIWIRE_CACHE_ENABLED=false: no lock to wait for. (Its lock was never held, and each export spun on
    the event loop for get_or_build's whole wait of 120 s before building.)"""
    builds: list[int] = []

    class Counted(NullCache):
        looks = 0

        async def get(self, key: str) -> bytes | None:
            self.looks += 1
            return None

    async def build() -> Entry:
        builds.append(1)
        return await _const(b"x")

    cache = Counted()
    results = await asyncio.gather(*(get_or_build(cache, "k", build, ttl=5, wait=2) for _ in range(3)))
    assert [status for _, status in results] == ["miss"] * 3 and len(builds) == 3
    assert cache.looks <= 6  # two looks a request at most: nobody polled a cache that holds nothing


async def _const(body: bytes) -> Entry:
    return make_entry(body, 0, 0, "text/plain", "x")


def test_entries_round_trip_and_etag_follows_bytes() -> None:
    a, b = make_entry(b"same", 1, 1, "t", "f"), make_entry(b"same", 1, 1, "t", "f")
    assert a.meta.etag == b.meta.etag
    assert make_entry(b"other", 1, 1, "t", "f").meta.etag != a.meta.etag
    assert Entry.decode(a.encode()) == a
    assert Entry.decode(make_entry(b"line\nbreak", 1, 1, "t", "f").encode()).body == b"line\nbreak"


async def test_the_memory_cache_is_bounded_in_bytes_too() -> None:
    cache = MemoryCache(max_entries=100, max_bytes=1000)
    for i in range(5):
        await cache.set(f"k{i}", bytes(300))
    assert [await cache.get(f"k{i}") is not None for i in range(5)] == [False, False, True, True, True]
    await cache.set("huge", bytes(1001))
    assert await cache.get("huge") is None and await cache.get("k4") is not None
    await cache.set("tmp", bytes(100))
    await cache.rename("tmp", "k4")
    facts = await cache.ping()
    assert facts["bytes"] == 700 and await cache.get("k4") == bytes(100)
    await cache.delete("k3")
    assert (await cache.ping())["bytes"] == 400


@pytest.mark.redis
async def test_large_values_are_served_from_a_near_copy_that_redis_still_vouches_for(redis_server) -> None:
    """A hit on a large entry reuses this process's copy while Redis's head of it matches; a rebuilt
    entry, an expired one and Redis going away are all seen at once."""
    cache = RedisCache(redis_server.url, near=MemoryCache(16))
    try:
        old = make_entry(bytes(200_000), 1, 1, "t", "f")
        await store_entry(cache, "big", old, 60)
        first, second = await cache.get("big"), await cache.get("big")
        assert first == old.encode() and second is first  # the near copy, not a new transfer
        decoded = await read_entry(cache, "big")
        assert decoded == old and await read_entry(cache, "big") is decoded  # decoded once, too
        new = make_entry(b"\x01" * 200_000, 1, 1, "t", "f")
        await store_entry(cache, "big", new, 60)  # another process rebuilds it
        assert await cache.get("big") == new.encode()
        await cache.delete("big")
        assert await cache.get("big") is None
    finally:
        await cache.close()


@pytest.mark.redis
async def test_a_near_copy_is_not_served_when_redis_is_down(tmp_path) -> None:
    from support import start_redis

    redis = start_redis(tmp_path / "redis")
    cache = RedisCache(redis.url, timeout=0.5, near=MemoryCache(16))
    try:
        await store_entry(cache, "big", make_entry(bytes(200_000), 1, 1, "t", "f"), 60)
        assert await cache.get("big") is not None
        redis.stop()
        with pytest.raises(StoreUnavailable):
            await cache.get("big")
    finally:
        await cache.close()


@pytest.mark.redis
async def test_small_versioned_entries_are_held_in_the_process_without_a_round_trip(redis_server) -> None:
    """``near_or_build`` (the stats): a key names its data version, so this process's copy answers with no
    Redis read at all; another version is another key and builds; each cache keeps its own copies."""
    cache, other = RedisCache(redis_server.url), RedisCache(redis_server.url)
    builds: list[str] = []

    def builder(body: bytes):  # type: ignore[no-untyped-def]
        async def build() -> Entry:
            builds.append(body.decode())
            return make_entry(body, 1, 1, "application/json", "s.json")
        return build

    try:
        first, status = await near_or_build(cache, "stats:v1", builder(b'{"v":1}'), ttl=60)
        assert status == "miss" and builds == ['{"v":1}']
        await cache.delete("stats:v1")  # gone from Redis: this process still holds the same bytes
        again, status = await near_or_build(cache, "stats:v1", builder(b"never"), ttl=60)
        assert status == "hit" and again is first and builds == ['{"v":1}']
        newer, status = await near_or_build(cache, "stats:v2", builder(b'{"v":2}'), ttl=60)
        assert status == "miss" and newer.body == b'{"v":2}'
        _, status = await near_or_build(other, "stats:v1", builder(b'{"v":1}'), ttl=60)
        assert status == "miss"  # a copy belongs to its cache, never to another store's
        large = bytes(NEAR_MAX_BYTES + 1)
        await near_or_build(cache, "big:v1", builder(large), ttl=60)
        await cache.delete("big:v1")
        _, status = await near_or_build(cache, "big:v1", builder(large), ttl=60)
        assert status == "miss"  # large documents are not held
    finally:
        await cache.close()
        await other.close()
