"""GET /api/v1/iocs and /api/v1/iocs/stats through real HTTP, with cache validators on stats."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from store.cache import near_map
from store.records import Ioc, utcnow


def _iocs(n: int, age_hours: float = 1.0) -> list[Ioc]:
    now = utcnow()
    kinds = [("ipv4", "203.0.113.{}"), ("domain", "bad{}.evil-host.net"), ("md5", "{:032x}")]
    rows = []
    for i in range(n):
        kind, pattern = kinds[i % 3]
        seen = now - timedelta(hours=age_hours, minutes=i)
        rows.append(Ioc(kind, pattern.format(i), ("high", "medium", "low")[i % 3], f"Feed {i % 4}",
                        ("government", "commercial", "community")[i % 3], seen, seen, seen,
                        sources=[f"Feed {i % 4}"], industries=["finance"] if i % 2 else ["energy"]))
    return rows


async def test_stats_come_from_the_cache_with_validators(server) -> None:
    rows = _iocs(30)
    await server.ctx.iocs.upsert_iocs(rows)
    async with server.client(server.pro_key) as http:
        first = await http.get("/api/v1/iocs/stats", params={"window": "7d"})
        second = await http.get("/api/v1/iocs/stats", params={"window": "7d"})
        not_modified = await http.get("/api/v1/iocs/stats", params={"window": "7d"},
                                      headers={"If-None-Match": first.headers["ETag"]})
    assert first.status_code == 200, first.text
    assert (first.headers["X-Cache"], second.headers["X-Cache"]) == ("miss", "hit")
    assert first.headers["ETag"] == second.headers["ETag"] and first.content == second.content
    assert not_modified.status_code == 304 and not_modified.content == b""
    built = parsedate_to_datetime(first.headers["Last-Modified"])  # RFC 9110 IMF-fixdate of the build
    assert second.headers["Last-Modified"] == first.headers["Last-Modified"]
    assert abs((datetime.now(UTC) - built).total_seconds()) < 60
    body = first.json()
    assert body["total"] == 30
    assert body["by_type"] == dict(Counter(r.type for r in rows))
    assert body["by_confidence"] == dict(Counter(r.confidence for r in rows))
    # 7 days back from now touch 8 calendar days: the partial first one is part of the series
    assert len(body["daily"]) == 8 and sum(d["count"] for d in body["daily"]) == 30
    assert "hourly" not in body


async def test_every_series_adds_up_to_the_total_partial_first_hour_included(server) -> None:
    now = utcnow()
    rows = _iocs(5, age_hours=23.9)  # the window's first (partial) hour, most often yesterday
    seen_long_ago = [replace(r, value=f"old-{r.value}", first_seen=now - timedelta(days=40), modified=now)
                     for r in _iocs(4)]  # first seen before the window, updated in it: counted by the total
    await server.ctx.iocs.upsert_iocs(rows + seen_long_ago)
    async with server.client(server.pro_key) as http:
        body = (await http.get("/api/v1/iocs/stats", params={"window": "1d"})).json()
    assert body["total"] == 9
    assert [len(body["daily"]), len(body["hourly"])] == [2, 25]  # 24 hours back touch 2 days and 25 hours
    assert sum(d["count"] for d in body["daily"]) == sum(h["count"] for h in body["hourly"]) == 9
    assert body["hourly"][0]["hour"][:13] == body["since"][:13]
    assert body["hourly"][-1]["hour"][:13] == body["generated_at"][:13]


async def test_a_write_makes_stats_current_again(server) -> None:
    await server.ctx.iocs.upsert_iocs(_iocs(3))
    async with server.client(server.pro_key) as http:
        before = await http.get("/api/v1/iocs/stats")
        await server.ctx.iocs.upsert_iocs(_iocs(6))
        after = await http.get("/api/v1/iocs/stats")
    assert after.headers["X-Cache"] == "miss"
    assert after.headers["ETag"] != before.headers["ETag"]
    assert after.json()["total"] == 6


async def test_stats_window_is_validated(server) -> None:
    async with server.client(server.pro_key) as http:
        response = await http.get("/api/v1/iocs/stats", params={"window": "2w"})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["parameter"] == "window"


async def test_ioc_list_filters_and_free_lookback(server) -> None:
    await server.ctx.iocs.upsert_iocs(_iocs(12, age_hours=1) + [
        Ioc("ipv4", "198.51.100.77", "high", "Old", "government", utcnow() - timedelta(days=3),
            utcnow() - timedelta(days=3), utcnow() - timedelta(days=3))])
    async with server.client(server.pro_key) as http:
        everything = (await http.get("/api/v1/iocs")).json()
        ipv4 = (await http.get("/api/v1/iocs", params={"type": "ipv4", "confidence": "high"})).json()
        capped = await http.get("/api/v1/iocs", params={"limit": 20000})
        sector = (await http.get("/api/v1/iocs", params={"industry": "financial-services"})).json()
    assert everything["meta"] == {"total": 13, "total_estimated": False, "limit": 100, "offset": 0}
    assert {r["type"] for r in ipv4["data"]} == {"ipv4"} and {r["confidence"] for r in ipv4["data"]} == {"high"}
    assert capped.headers["X-Limit-Capped"] == "true" and capped.json()["meta"]["limit"] == 10000
    assert capped.headers["X-Tier-Lookback-Days"] == "365"
    assert {tuple(r["industries"]) for r in sector["data"]} == {("finance",)}
    async with server.client(server.free_key) as http:
        free = await http.get("/api/v1/iocs", params={"since": "2020-01-01T00:00:00Z"})
        free_capped = await http.get("/api/v1/iocs", params={"limit": 1000})
    assert free.headers["X-Tier-Lookback-Clamped"] == "true" and free.headers["X-Tier-Lookback-Days"] == "1"
    # spec, Limits: a Free key's IOC results stop at 100
    assert free_capped.headers["X-Limit-Capped"] == "true" and free_capped.json()["meta"]["limit"] == 100
    assert "198.51.100.77" not in free.text and free.json()["meta"]["total"] == 12


async def test_ioc_list_rejects_malformed_parameters(server) -> None:
    async with server.client(server.pro_key) as http:
        for params, name in (({"type": "banana"}, "type"), ({"limit": "x"}, "limit"),
                             ({"since": "yesterday"}, "since"), ({"offset": "-1"}, "offset")):
            response = await http.get("/api/v1/iocs", params=params)
            assert response.status_code == 400
            assert response.json()["error"]["details"]["parameter"] == name


async def test_a_small_page_is_kept_until_the_next_write(server) -> None:
    """A repeated small page comes from memory, whole, with its ETag; a write is seen at once."""
    await server.ctx.iocs.upsert_iocs(_iocs(5))
    async with server.client(server.pro_key) as http:
        first = await http.get("/api/v1/iocs", params={"limit": 3})
        again = await http.get("/api/v1/iocs", params={"limit": 3})
        not_modified = await http.get("/api/v1/iocs", params={"limit": 3},
                                      headers={"If-None-Match": first.headers["ETag"]})
        await server.ctx.iocs.upsert_iocs(_iocs(9))
        after = await http.get("/api/v1/iocs", params={"limit": 3})
    assert first.content == again.content and first.headers["ETag"] == again.headers["ETag"]
    assert int(first.headers["Content-Length"]) == len(first.content)  # one write, not chunks
    assert not_modified.status_code == 304
    assert first.json()["meta"]["total"] == 5 and after.json()["meta"]["total"] == 9
    assert after.headers["ETag"] != first.headers["ETag"]
    assert len(near_map(server.ctx.cache, "ioc-pages", 0)._values) == 2  # one per data version


async def test_a_small_page_is_kept_across_a_clock_tick(server) -> None:
    """The lookback floor moves with the clock; without a write the page and its ETag stay, one entry."""
    await server.ctx.iocs.upsert_iocs(_iocs(5))
    async with server.client(server.pro_key) as http:
        first = await http.get("/api/v1/iocs", params={"limit": 3})
        await asyncio.sleep(1.1)  # into the next second: the floor, rounded to the second, has moved
        again = await http.get("/api/v1/iocs", params={"limit": 3})
    assert again.content == first.content and again.headers["ETag"] == first.headers["ETag"]
    assert len(near_map(server.ctx.cache, "ioc-pages", 0)._values) == 1


async def test_a_row_leaving_the_lookback_leaves_a_kept_page(server) -> None:
    """Free's 1-day lookback: a row a few seconds from its edge is listed, then not, with no write between."""
    edge = replace(_iocs(1, age_hours=24 - 6 / 3600)[0], value="edge.evil-host.net", type="domain")  # 6 s inside
    await server.ctx.iocs.upsert_iocs([*_iocs(3), edge])
    async with server.client(server.free_key) as http:
        first = (await http.get("/api/v1/iocs", params={"limit": 10})).json()
        while utcnow() - timedelta(days=1, seconds=1) <= edge.modified:  # wait for the floor to pass it
            await asyncio.sleep(0.2)
        later = (await http.get("/api/v1/iocs", params={"limit": 10})).json()
    assert first["meta"]["total"] == 4 and "edge.evil-host.net" in {i["value"] for i in first["data"]}
    assert later["meta"]["total"] == 3 and "edge.evil-host.net" not in {i["value"] for i in later["data"]}


async def test_a_large_page_streams_in_chunks(server) -> None:
    await server.ctx.iocs.upsert_iocs(_iocs(250))
    async with server.client(server.pro_key) as http:
        response = await http.get("/api/v1/iocs", params={"limit": 1000})
    assert response.headers.get("Transfer-Encoding") == "chunked" and "ETag" not in response.headers
    assert response.json()["meta"] == {"total": 250, "total_estimated": False, "limit": 1000, "offset": 0}
    assert len(response.json()["data"]) == 250
    assert not near_map(server.ctx.cache, "ioc-pages", 0)._values


async def test_ioc_list_totals_follow_the_count_strategy(server) -> None:
    await server.ctx.iocs.upsert_iocs(_iocs(12))
    async with server.client(server.pro_key) as http:
        async def meta(**params: str) -> dict[str, object]:
            response = await http.get("/api/v1/iocs", params={"limit": "2", **params})
            assert response.status_code == 200, response.text
            return response.json()["meta"]  # type: ignore[no-any-return]

        default, exact, none = await meta(type="domain"), await meta(count_strategy="exact"), await meta(
            count_strategy="none")
        sector = await meta(industry="finance")
        search = (await http.get("/api/v1/iocs/search", params={"q": "evil-host.net", "count_strategy": "exact"}))
        wrong = await http.get("/api/v1/iocs", params={"count_strategy": "planned"})
    assert (default["total"], default["total_estimated"]) == (4, False)  # from the counters: exact
    assert (exact["total"], none["total"], none["total_estimated"]) == (12, None, False)
    assert (sector["total"], sector["total_estimated"]) == (6, False)  # counted, far below the cap
    assert search.json()["meta"]["total"] == 4
    assert wrong.status_code == 400 and wrong.json()["error"]["details"]["parameter"] == "count_strategy"
