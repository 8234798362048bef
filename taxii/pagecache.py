"""Encoded TAXII pages in the service cache, keyed by the request and the data version.

A response cache, not paging state: a process without the entry builds the page itself, and every
answer is the one the store gives. The key names the data version (every write of IOCs or articles
bumps it, and articles feed the objects' external references), the endpoint, collection and object,
the filters, the position, the page size and the tier's lookback.

One input moves without a write: the lookback floor (now minus the tier's days). A page read with
lower bound L0 stays exact for any later bound L1 while its first object was added after L1, because
it began with the first record after L0; an empty page stays empty. Otherwise the entry is ignored.
Only pages up to ``MAX_CACHED_BYTES`` are kept, so the bounded cache never holds a 10,000-object page.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from store.base import StoreUnavailable
from store.cache import Cache
from store.records import iso, parse_iso

MAX_CACHED_BYTES = 1 << 20
_NONE = b"-"


@dataclass(frozen=True, slots=True)
class CachedPage:
    """An encoded page, the date_added of its first and last objects (None when empty), and its ETag.

    The ETag is hashed once when the page is built; a hit reuses it rather than hashing the body again
    as Tornado does for every response.
    """

    body: bytes
    first: datetime | None
    last: datetime | None
    etag: str = ""

    @classmethod
    def build(cls, body: bytes, first: datetime | None, last: datetime | None) -> CachedPage:
        return cls(body, first, last, '"' + hashlib.sha1(body, usedforsecurity=False).hexdigest() + '"')

    def valid_from(self, lower: datetime) -> bool:
        """True when serving this page for a read from ``lower`` gives the same answer."""
        return self.first is None or self.first > lower

    def encode(self) -> bytes:
        stamps = [iso(d).encode() if d else _NONE for d in (self.first, self.last)]
        return b"\n".join([*stamps, self.etag.encode(), self.body])

    @classmethod
    def decode(cls, raw: bytes) -> CachedPage:
        first, last, etag, body = raw.split(b"\n", 3)
        first_at, last_at = (None if s == _NONE else parse_iso(s.decode()) for s in (first, last))
        return cls(body, first_at, last_at, etag.decode())


def page_key(data_version: int, parts: dict[str, Any]) -> str:
    """``ctiwire:taxii:v<version>:<digest of the request's parts>``."""
    digest = hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()[:40]
    return f"ctiwire:taxii:v{data_version}:{digest}"


class PageCache:
    """Pages in ``cache``; a cache that is down is a miss, never an error (as for exports)."""

    def __init__(self, cache: Cache, ttl: int) -> None:
        self.cache = cache
        self.ttl = ttl

    async def get(self, key: str, lower: datetime) -> CachedPage | None:
        try:
            raw = await self.cache.get(key)
        except StoreUnavailable:
            return None
        if raw is None:
            return None
        page = CachedPage.decode(raw)
        return page if page.valid_from(lower) else None

    async def put(self, key: str, page: CachedPage) -> None:
        if len(page.body) > MAX_CACHED_BYTES:
            return
        try:
            await self.cache.set(key, page.encode(), self.ttl)
        except StoreUnavailable:
            return
