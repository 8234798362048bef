"""The page cache: exact while the data version and the first object allow, a miss when the cache is down."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import taxii.objects
from store.base import StoreUnavailable
from store.cache import MemoryCache
from store.records import utcnow
from taxii.media import TAXII_21
from taxii.page_cache import MAX_CACHED_BYTES, CachedPage, PageCache, page_key

T0 = datetime(2026, 4, 1, 12, 0, 0, 5000, tzinfo=UTC)


async def test_a_page_is_served_while_its_first_object_is_after_the_floor() -> None:
    pages = PageCache(MemoryCache(), ttl=60)
    key = page_key(7, {"s": "objects:all-iocs:", "n": 100})
    await pages.put(key, CachedPage.build(b'{"more":false,"objects":[1]}', T0, T0 + timedelta(minutes=1)))
    hit = await pages.get(key, T0 - timedelta(milliseconds=1))
    assert hit == CachedPage.build(b'{"more":false,"objects":[1]}', T0, T0 + timedelta(minutes=1))
    assert await pages.get(key, T0) is None  # the floor reached the first object: it would be excluded now
    assert await pages.get(page_key(8, {"s": "objects:all-iocs:", "n": 100}), T0 - timedelta(days=1)) is None


async def test_empty_pages_stay_valid_and_big_pages_are_not_kept() -> None:
    pages = PageCache(MemoryCache(), ttl=60)
    await pages.put("empty", CachedPage.build(b'{"more":false}', None, None))
    assert await pages.get("empty", T0 + timedelta(days=400)) == CachedPage.build(b'{"more":false}', None, None)
    await pages.put("big", CachedPage.build(b"x" * (MAX_CACHED_BYTES + 1), T0, T0))
    assert await pages.get("big", T0 - timedelta(days=1)) is None


def test_an_entry_decodes_to_the_page_it_encodes_and_leads_with_its_etag() -> None:
    page = CachedPage.build(b'{"more":false,\n"objects":[1]}', T0, T0 + timedelta(minutes=1))
    assert CachedPage.decode(page.encode()) == page
    assert page.encode().startswith(page.etag.encode())  # RedisCache's near copies compare entry heads
    assert (page.first, page.last) == ("2026-04-01T12:00:00.005000Z", "2026-04-01T12:01:00.005000Z")
    empty = CachedPage.build(b'{"more":false}', None, None)
    assert CachedPage.decode(empty.encode()) == empty and (empty.first_at, empty.first) == (None, "")


async def test_a_page_holds_until_the_next_expiry_after_it_was_read() -> None:
    pages = PageCache(MemoryCache(), ttl=60)
    page = CachedPage.build(b'{"more":false}', None, None, T0 + timedelta(hours=1))
    assert CachedPage.decode(page.encode()) == page
    await pages.put("k", page)
    assert await pages.get("k", T0, T0 + timedelta(minutes=59)) == page
    assert await pages.get("k", T0, T0 + timedelta(hours=1)) is None  # a record expired: read again


class DownCache(MemoryCache):
    async def get(self, key: str) -> bytes | None:
        raise StoreUnavailable("down")

    async def set(self, key: str, value: bytes, ttl: int | None = None) -> None:
        raise StoreUnavailable("down")


async def test_a_cache_that_is_down_is_a_miss() -> None:
    pages = PageCache(DownCache(), ttl=60)
    await pages.put("k", CachedPage.build(b"{}", T0, T0))
    assert await pages.get("k", T0 - timedelta(days=1)) is None


def test_keys_name_every_part_of_the_request() -> None:
    parts = {"s": "objects:all-iocs:", "f": {"t": ["indicator"]}, "n": 100, "d": 365, "p": None}
    assert page_key(3, parts) == page_key(3, dict(reversed(list(parts.items()))))
    assert len({page_key(3, parts), page_key(4, parts), page_key(3, {**parts, "n": 99}),
                page_key(3, {**parts, "d": 1}), page_key(3, {**parts, "s": "manifest:all-iocs:"})}) == 5


async def test_repeated_pages_come_from_the_cache_until_a_write(server, iocs, taxii_http) -> None:
    await server.ctx.iocs.upsert_iocs(iocs(30))
    url = "/api/taxii2/api/collections/all-iocs/objects/"
    async with taxii_http(server.pro_key) as http:
        first = await http.get(url, params={"limit": 10})
        second = await http.get(url, params={"limit": 10})
        await server.ctx.iocs.upsert_iocs(iocs(1, start=99))
        third = await http.get(url, params={"limit": 10})
        unchanged = await http.get(url, params={"limit": 10}, headers={"If-None-Match": third.headers["ETag"]})
        missing = [await http.get(url + "indicator--00000000-0000-5000-8000-000000000000/") for _ in range(2)]
    assert (first.headers["X-Cache"], second.headers["X-Cache"], third.headers["X-Cache"]) == ("miss", "hit", "miss")
    assert first.content == second.content and first.headers["ETag"] == second.headers["ETag"]
    assert second.headers["Content-Type"] == TAXII_21
    assert first.headers["ETag"] != third.headers["ETag"]
    assert {k: v for k, v in first.headers.items() if k.startswith("x-taxii")} == {
        k: v for k, v in second.headers.items() if k.startswith("x-taxii")}
    assert [m.status_code for m in missing] == [404, 404]
    assert unchanged.status_code == 304 and unchanged.content == b""


def _answer_headers(response: Any) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.startswith(("x-taxii", "x-tier", "etag", "content-"))}


async def test_a_repeated_uri_gets_the_answer_its_first_request_got(server, iocs, taxii_http) -> None:
    """A repeat skips the planning, never its outcome: the same bytes and window headers, follow-up
    pages too, and a forged token is refused every time (a refusal is never remembered)."""
    await server.ctx.iocs.upsert_iocs(iocs(30))
    url = "/api/taxii2/api/collections/all-iocs/objects/"
    clamped = {"limit": 10, "added_after": "2001-01-01T00:00:00Z"}  # older than the Pro lookback
    async with taxii_http(server.pro_key) as http:
        first, again = [await http.get(url, params=clamped) for _ in range(2)]
        token = first.json()["next"]
        follow = [await http.get(url, params={"limit": 10, "next": token}) for _ in range(2)]
        forged = [await http.get(url, params={"limit": 10, "next": token[:-3] + "abc"}) for _ in range(2)]
    assert first.headers["X-Tier-Lookback-Clamped"] == "true" and again.headers["X-Cache"] == "hit"
    assert again.content == first.content and _answer_headers(again) == _answer_headers(first)
    assert follow[1].headers["X-Cache"] == "hit" and follow[1].content == follow[0].content
    assert _answer_headers(follow[1]) == _answer_headers(follow[0])
    assert {o["id"] for o in follow[0].json()["objects"]}.isdisjoint(o["id"] for o in first.json()["objects"])
    assert [r.status_code for r in forged] == [400, 400]


async def test_a_repeated_uri_is_planned_again_when_the_lookback_floor_moves(server, iocs, taxii_http,
                                                                            monkeypatch) -> None:
    """The remembered plan names the floor's second: once the lookback has passed the objects, the same URI
    answers without them (the floor is now minus 365 days for Pro)."""
    await server.ctx.iocs.upsert_iocs(iocs(5))
    url = "/api/taxii2/api/collections/all-iocs/objects/"
    async with taxii_http(server.pro_key) as http:
        before = await http.get(url)
        later = utcnow() + timedelta(days=400)
        monkeypatch.setattr(taxii.objects, "utcnow", lambda: later)
        after = await http.get(url)
    assert len(before.json()["objects"]) == 5
    assert after.status_code == 200 and after.json() == {"more": False}
