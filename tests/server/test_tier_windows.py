"""Tier windows checked on the rows each endpoint returns (spec, Limits: IOC lookback), and windows derived
from the tier table: a lookback that is none of the standard windows still has every export and the stats."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from application import scheduler
from config import tiers
from exporters.registry import EXPORTERS
from store.records import Ioc, utcnow

# A minute inside and a minute outside each tier's IOC lookback (1 day Free, 365 days Pro): every window,
# the exports' included, starts exactly at the lookback.
INSIDE, OUTSIDE = timedelta(minutes=-1), timedelta(minutes=1)
AGES = {
    "fresh-free.tier.example": timedelta(days=1) + INSIDE,
    "stale-free.tier.example": timedelta(days=1) + OUTSIDE,
    "fresh-pro.tier.example": timedelta(days=365) + INSIDE,
    "stale-pro.tier.example": timedelta(days=365) + OUTSIDE,
}
ROWS = {"free": {"fresh-free.tier.example"},
        "pro": {"fresh-free.tier.example", "stale-free.tier.example", "fresh-pro.tier.example"}}
LONG_AGO = (utcnow() - timedelta(days=3 * 365)).isoformat()
# Every status: the year-old records have long expired (store.decay), and the windows are what is checked.
EVERY = {"status": "active,expired,revoked"}


def _ioc(value: str, age: timedelta) -> Ioc:
    seen = utcnow() - age
    return Ioc("domain", value, "high", "CISA", "government", seen, seen, seen)


@pytest.fixture
async def seeded(server: Any) -> Any:
    await server.ctx.iocs.upsert_iocs([_ioc(value, age) for value, age in AGES.items()])
    return server


def _key(server: Any, tier: str) -> str:
    return {"free": server.free_key, "pro": server.pro_key}[tier]


async def _get(server: Any, tier: str, url: str, params: dict[str, Any]) -> Any:
    async with server.client(_key(server, tier)) as http:
        response = await http.get(url, params=params)
    assert response.status_code == 200, response.text
    return response


@pytest.mark.parametrize("tier", ["free", "pro"])
@pytest.mark.parametrize(("url", "params"), [
    ("/api/v1/iocs", {}), ("/api/v1/iocs", {"since": LONG_AGO}),
    ("/api/v1/iocs/search", {"q": "tier.example"}), ("/api/v1/iocs/search", {"q": "tier.example", "since": LONG_AGO}),
])
async def test_ioc_rows_keep_to_the_tier_lookback(seeded: Any, tier: str, url: str, params: dict[str, Any]) -> None:
    response = await _get(seeded, tier, url, {**params, **EVERY})
    assert {row["value"] for row in response.json()["data"]} == ROWS[tier]
    assert response.headers["X-Tier-Lookback-Days"] == str(tiers.TIERS[tier].ioc_lookback_days)


@pytest.mark.parametrize("tier", ["free", "pro"])
async def test_lookup_keeps_to_the_tier_lookback(seeded: Any, tier: str) -> None:
    """A record outside the lookback answers as a value never stored: /iocs/search hides it too."""
    for value in AGES:
        response = await _get(seeded, tier, "/api/v1/lookup", {"value": value})
        body = response.json()
        assert body["found"] is (value in ROWS[tier]), value
        assert ("first_seen" in body) is body["found"] and body["hunting_queries"], value
        assert response.headers["X-Tier-Lookback-Days"] == str(tiers.TIERS[tier].ioc_lookback_days)


@pytest.mark.parametrize("fmt", list(EXPORTERS))
@pytest.mark.parametrize(("params", "rows"), [
    ({}, ROWS["pro"]), ({"window": "365d"}, ROWS["pro"]), ({"window": "1d"}, ROWS["free"]),
    ({"since": LONG_AGO}, ROWS["pro"]),
])
async def test_export_rows_keep_to_the_window(seeded: Any, fmt: str, params: dict[str, Any], rows: set[str]) -> None:
    body = (await _get(seeded, "pro", f"/api/v1/iocs/{fmt}", {**params, **EVERY, "limit": 1000})).text
    assert {value for value in AGES if value in body} == rows


@pytest.mark.parametrize(("window", "total"), [("1d", 1), ("365d", 3)])
async def test_stats_count_the_window(seeded: Any, window: str, total: int) -> None:
    assert (await _get(seeded, "pro", "/api/v1/iocs/stats", {"window": window})).json()["total"] == total


@pytest.fixture
def pro_180(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tier table with a Pro IOC lookback of 180 days: no standard window (1d/7d/30d/365d) names it."""
    monkeypatch.setitem(tiers._TABLE, "pro", replace(tiers.PRO, ioc_lookback_days=180))


@pytest.mark.parametrize("fmt", list(EXPORTERS))
async def test_every_export_follows_a_changed_lookback(server: Any, pro_180: None, fmt: str) -> None:
    await server.ctx.iocs.upsert_iocs([_ioc("in-180.example", timedelta(days=179)),
                                        _ioc("out-180.example", timedelta(days=181))])
    url = f"/api/v1/iocs/{fmt}"
    for params in ({}, {"window": "180d"}, {"window": "30d"}):
        await _get(server, "pro", url, params)
    body = (await _get(server, "pro", url, EVERY)).text
    assert "in-180.example" in body and "out-180.example" not in body
    async with server.client(server.pro_key) as http:
        too_long = await http.get(url, params={"window": "365d"})
    assert too_long.status_code == 400 and too_long.json()["error"]["details"]["parameter"] == "window"


async def test_the_stats_follow_a_changed_lookback(server: Any, pro_180: None) -> None:
    assert (await _get(server, "pro", "/api/v1/iocs/stats", {})).json()["window"] == "7d"
    assert len((await _get(server, "pro", "/api/v1/iocs/stats", {"window": "180d"})).json()["daily"]) == 181
    async with server.client(server.pro_key) as http:
        too_long = await http.get("/api/v1/iocs/stats", params={"window": "365d"})
    assert too_long.status_code == 400 and too_long.json()["error"]["details"]["parameter"] == "window"


async def test_the_precomputed_windows_follow_a_changed_lookback(server: Any, pro_180: None) -> None:
    """The schedule builds each window the tier may ask for, so the default export is a cache hit."""
    await server.ctx.iocs.upsert_iocs([_ioc("in-180.example", timedelta(days=179))])
    await scheduler.precompute_all(server.ctx)
    for fmt in EXPORTERS:
        for params in ({}, {"window": "180d"}, {"window": "1d"}):
            response = await _get(server, "pro", f"/api/v1/iocs/{fmt}", params)
            assert response.headers["X-Cache"] == "hit", (fmt, params)
    for window in ("180d", "7d"):
        response = await _get(server, "pro", "/api/v1/iocs/stats", {"window": window})
        assert response.headers["X-Cache"] == "hit", window
