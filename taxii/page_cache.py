"""Encoded TAXII pages in the service cache, keyed by the request and the data version.

A response cache, not paging state: a process without the entry builds the page itself, and every
answer is the one the store gives. The key names the data version (every write of IOCs or articles
bumps it, and articles feed the objects' external references), the endpoint, collection and object,
the filters, the position, the page size and the tier's lookback.

Two inputs move without a write. The lookback floor (now minus the tier's days): a page read with
lower bound L0 stays exact for any later bound L1 while its first object was added after L1, because
it began with the first record after L0; an empty page stays empty. And the time the statuses are read
at, the request's millisecond (store.decay.instant): when a record's valid_until passes it is expired, a new
version added at its valid_until (taxii.page_query), so a page of IOC records read at T holds until the next
expiry after T. Served later, it is the collection as of T: every write (the data version names them) and
every expiry up to T, and any later expiry is added after T, so after the page's last date_added and within
the next poll's ``added_after``. Otherwise the entry is ignored.
Only pages up to ``MAX_CACHED_BYTES`` are kept, so the bounded cache never holds a 10,000-object page.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from store.base import StoreUnavailable
from store.cache import NEAR_MAX_BYTES, Cache, NearMap, body_etag, near_map
from taxii.media import taxii_time

MAX_CACHED_BYTES = 1 << 20
NEAR_PAGES = 64
# The entry layout below; a new layout gets a new number, so a process never decodes the other's
# entries when several versions share one Redis (a rolling deploy).
PAGE_FORMAT = 3
_NONE = "-"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def micros(value: datetime) -> int:
    """Microseconds since the epoch: compares as the datetime does, and is parsed with one int()."""
    return (value - _EPOCH) // _MICROSECOND


@dataclass(frozen=True, slots=True)
class CachedPage:
    """An encoded page with what a hit needs besides the body, computed once when the page is built.

    ``first_at`` is the date_added of the first object in epoch microseconds (None when the page is
    empty), for :meth:`valid_from`; ``first`` and ``last`` are the X-TAXII-Date-Added headers of a
    non-empty page, and ``etag`` the hash of the body (Tornado would hash it again on every response).
    ``until`` is the next expiry after the page was read, in epoch microseconds (None: none), for
    :meth:`current`.
    """

    body: bytes
    etag: str
    first_at: int | None
    first: str
    last: str
    until: int | None = None

    @classmethod
    def build(cls, body: bytes, first: datetime | None, last: datetime | None,
              until: datetime | None = None) -> CachedPage:
        etag, held = body_etag(body), None if until is None else micros(until)
        if first is None or last is None:
            return cls(body, etag, None, "", "", held)
        return cls(body, etag, micros(first), taxii_time(first), taxii_time(last), held)

    def valid_from(self, lower: datetime) -> bool:
        """True when serving this page for a read from ``lower`` gives the same answer."""
        return self.first_at is None or self.first_at > micros(lower)

    def current(self, now: datetime) -> bool:
        """True while no record has expired since the page was read, at ``now`` (store.decay.instant)."""
        return self.until is None or micros(now) < self.until

    def encode(self) -> bytes:
        """One line ``etag first_at first last until``, then the body: the ETag leads, as RedisCache.get
        expects."""
        numbers = [_NONE if n is None else str(n) for n in (self.first_at, self.until)]
        head = " ".join([self.etag, numbers[0], self.first or _NONE, self.last or _NONE, numbers[1]])
        return head.encode() + b"\n" + self.body

    @classmethod
    def decode(cls, raw: bytes) -> CachedPage:
        head, body = raw.split(b"\n", 1)
        etag, first_at, first, last, until = head.decode().split(" ")
        held = None if until == _NONE else int(until)
        if first_at == _NONE:
            return cls(body, etag, None, "", "", held)
        return cls(body, etag, int(first_at), first, last, held)


def page_key(data_version: int, parts: dict[str, Any]) -> str:
    """``ctiwire:taxii:p<format>:v<version>:<digest of the request's parts>``."""
    digest = hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()[:40]
    return f"ctiwire:taxii:p{PAGE_FORMAT}:v{data_version}:{digest}"


class PageCache:
    """Pages in ``cache``; a cache that is down is a miss, never an error (as for exports)."""

    def __init__(self, cache: Cache, ttl: int) -> None:
        self.cache = cache
        self.ttl = ttl
        # Decoded pages kept in this process as well: the key names the data version, so a page held
        # here is never stale, and a hit neither reads the cache nor parses the entry.
        self.near: NearMap[CachedPage] = near_map(cache, "taxii-pages", NEAR_PAGES)

    async def get(self, key: str, lower: datetime, now: datetime | None = None) -> CachedPage | None:
        """The page under ``key`` when it is exact for a read from ``lower`` at ``now`` (store.decay.instant)."""
        page = self.near.get(key)
        if page is None:
            try:
                raw = await self.cache.get(key)
            except StoreUnavailable:
                return None
            if raw is None:
                return None
            page = self._keep(key, CachedPage.decode(raw))
        return page if page.valid_from(lower) and (now is None or page.current(now)) else None

    def _keep(self, key: str, page: CachedPage) -> CachedPage:
        if len(page.body) <= NEAR_MAX_BYTES:
            self.near.put(key, page)
        return page

    async def put(self, key: str, page: CachedPage) -> None:
        if len(page.body) > MAX_CACHED_BYTES:
            return
        try:
            await self.cache.set(key, page.encode(), self.ttl)
        except StoreUnavailable:
            return  # and nothing near: a near page is one the shared cache holds too
        self._keep(key, page)
