"""Build once, serve many: cache entries with their metadata, built under a lock.

An entry is ``orjson(meta) + b"\\n" + body`` under one key. A build writes a temporary key and renames it
over the live one, so a reader sees the old entry or the new one, never half of one
(ARCHITECTURE.md, "Bulk exports and stats"). Keys carry the data version: after ingestion bumps it,
old entries are simply never asked for again and expire.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Literal

import orjson

from store.base import StoreUnavailable
from store.cache import NEAR_MAX_BYTES, Cache, near_map
from store.records import iso, utcnow

CacheStatus = Literal["hit", "miss", "bypass"]


@dataclass(frozen=True, slots=True)
class EntryMeta:
    """What a cached document carries beside its bytes."""

    etag: str
    built_at: str
    rows: int
    data_version: int
    media_type: str
    filename: str
    # For an export over a time window (exporters.precompute): the window's start at the build, and the
    # oldest ``modified`` among its records (None: no records). The same records answer any later start up
    # to that moment, so the entry stays exact until the window's start passes it.
    floor: str | None = None
    keeps_until: str | None = None
    # The first ``valid_until`` after the build's status time among its records (None: none expires): the
    # document changes then without a write (store.decay), so it is built again from that moment.
    changes_at: str | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    meta: EntryMeta
    body: bytes

    def encode(self) -> bytes:
        return orjson.dumps(asdict(self.meta)) + b"\n" + self.body

    @classmethod
    def decode(cls, raw: bytes) -> Entry:
        head, _, body = raw.partition(b"\n")
        return cls(EntryMeta(**orjson.loads(head)), body)


def make_entry(body: bytes, rows: int, data_version: int, media_type: str, filename: str,
               floor: str | None = None, keeps_until: str | None = None, changes_at: str | None = None) -> Entry:
    """An entry with a strong ETag derived from the bytes (equal bytes, equal ETag, on every process)."""
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    meta = EntryMeta(etag, iso(utcnow()), rows, data_version, media_type, filename, floor, keeps_until, changes_at)
    return Entry(meta, body)


async def store_entry(cache: Cache, key: str, entry: Entry, ttl: int | None) -> None:
    """Write under a temporary key, then rename over the live key (atomic on Redis and in memory)."""
    temp = f"{key}:tmp:{secrets.token_hex(6)}"
    await cache.set(temp, entry.encode(), ttl)
    await cache.rename(temp, key)


# Decoded large entries, by the very bytes object they came from: a cache hit on a near copy
# (store.cache.RedisCache) hands back the same object, and decoding it again would copy megabytes.
_DECODED: OrderedDict[int, tuple[bytes, Entry]] = OrderedDict()
_DECODED_MAX = 8
_DECODE_MEMO_MIN = 64 * 1024


def decode_entry(raw: bytes) -> Entry:
    """``Entry.decode``, remembered for large values (the memo holds ``raw`` so its id stays unique)."""
    if len(raw) < _DECODE_MEMO_MIN:
        return Entry.decode(raw)
    known = _DECODED.get(id(raw))
    if known is not None and known[0] is raw:
        _DECODED.move_to_end(id(raw))
        return known[1]
    entry = Entry.decode(raw)
    _DECODED[id(raw)] = (raw, entry)
    while len(_DECODED) > _DECODED_MAX:
        _DECODED.popitem(last=False)
    return entry


async def read_entry(cache: Cache, key: str) -> Entry | None:
    raw = await cache.get(key)
    return None if raw is None else decode_entry(raw)


Builder = Callable[[], Awaitable[Entry]]
Fresh = Callable[[Entry], bool]


def _always(_entry: Entry) -> bool:
    return True


# A build holds its lock this long and extends it while it runs (store.cache): a holder killed mid-build
# frees the key within LOCK_TTL, not after minutes. Waiters look at the cache between tries.
LOCK_TTL = 10.0
POLL = 0.25


async def get_or_build(cache: Cache, key: str, build: Builder, *, ttl: int | None,
                       lock_ttl: float = LOCK_TTL, wait: float = 120.0,
                       fresh: Fresh = _always) -> tuple[Entry, CacheStatus]:
    """The cached entry, or one build under a lock that concurrent callers wait for. A cached entry that
    is not ``fresh`` counts as absent: it is built again and replaced.

    A waiter checks the cache every ``POLL`` seconds and takes the lock over when its holder stopped
    extending it (killed); after ``wait`` it builds itself, and stores what it built (the temporary key and
    the rename keep a reader from seeing half of it). When the cache is down the document is built
    directly (``bypass``): exports still answer.
    """
    try:
        return await _cached_or_locked_build(cache, key, build, ttl, lock_ttl, wait, fresh)
    except StoreUnavailable:
        return await build(), "bypass"


# Small entries kept in the process as well, per cache and by key: a key names its data
# version, so a held entry can never be stale, and a hit costs no round trip to the shared cache. Bounded.
NEAR_ENTRIES = 64


async def near_or_build(cache: Cache, key: str, build: Builder, *, ttl: int | None) -> tuple[Entry, CacheStatus]:
    """``get_or_build`` for small documents under versioned keys, with a copy kept in this process."""
    near = near_map(cache, "entries", NEAR_ENTRIES)
    held = near.get(key)
    if held is not None:
        return held, "hit"
    entry, status = await get_or_build(cache, key, build, ttl=ttl)
    if status != "bypass" and len(entry.body) <= NEAR_MAX_BYTES:
        near.put(key, entry)
    return entry, status


async def _cached_or_locked_build(cache: Cache, key: str, build: Builder, ttl: int | None,
                                  lock_ttl: float, wait: float, fresh: Fresh) -> tuple[Entry, CacheStatus]:
    deadline = time.monotonic() + wait
    while True:
        entry = await read_entry(cache, key)
        if entry is not None and fresh(entry):
            return entry, "hit"  # cached before, or built by the lock's holder while this one waited
        last_try = time.monotonic() >= deadline
        async with cache.lock(key, lock_ttl, 0.0 if last_try else POLL) as acquired:
            if acquired or last_try:
                entry = await read_entry(cache, key)
                if entry is not None and fresh(entry):
                    return entry, "hit"
                entry = await build()
                await store_entry(cache, key, entry, ttl)
                return entry, "miss"


async def build_in_thread(fn: Callable[[], bytes]) -> bytes:
    """Encode off the event loop: a large export must not stall other requests."""
    return await asyncio.to_thread(fn)
