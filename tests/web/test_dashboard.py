"""The IOC dashboard over real HTTP on every backend: the chart's bars add up to the total the stats API
gives (partial first day and hour included), hourly for 1d, and a window the plan lacks is said, not swapped."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx
from support import RunningServer
from web_support import browser, sign_in, sign_up

from store import accounts
from store.records import Ioc, utcnow
from web.insights import ago, windows_for

BAR = re.compile(r"<rect [^>]*><title>([^<]+): ([\d,]+)</title></rect>")


def _iocs() -> list[Ioc]:
    """Records across a week; some first seen long before the window but updated in it (the total counts
    them), some in the first, partial hour of the 1d window and the first, partial day of 7d."""
    now = utcnow()
    ages = [timedelta(hours=23, minutes=58), timedelta(days=6, hours=23, minutes=58), *(
        timedelta(hours=5 * n) for n in range(12))]
    rows = [Ioc("domain", f"bad{n}.example.net", "high", "Test Feed", "commercial", now - age, now - age, now - age)
            for n, age in enumerate(ages)]
    return rows + [Ioc("ipv4", f"203.0.113.{n}", "low", "Test Feed", "community", now - timedelta(days=90),
                       now, now) for n in range(3)]


def _bars(page: httpx.Response) -> list[tuple[str, int]]:
    figure = page.text[page.text.index('data-testid="stats-chart"'):]
    figure = figure[:figure.index("</svg>")]
    return [(label, int(count.replace(",", ""))) for label, count in BAR.findall(figure)]


async def _pro(site: RunningServer, client: httpx.AsyncClient) -> None:
    await accounts.set_password(site.ctx.accounts, "pro@test.local", "pro password long")
    await sign_in(client, "pro@test.local", "pro password long")


async def test_the_bars_add_up_to_the_stats_api_total(site: RunningServer) -> None:
    await site.ctx.iocs.upsert_iocs(_iocs())
    async with browser(site) as client, site.client(site.pro_key) as api:
        await _pro(site, client)
        # 1d: the five of the last 20 hours, the one of 23 h 58 min ago and the three updated now; 7d: all
        for window, series, buckets, total in (("1d", "hourly", 25, 9), ("7d", "daily", 8, 17)):
            page = await client.get("/account/dashboard", params={"window": window})
            stats = (await api.get("/api/v1/iocs/stats", params={"window": window})).json()
            bars = _bars(page)
            assert page.status_code == 200 and stats["total"] == total
            assert f'data-testid="total">{stats["total"]:,}<' in page.text
            assert len(bars) == len(stats[series]) == buckets
            assert sum(n for _, n in bars) == sum(b["count"] for b in stats[series]) == stats["total"]
        assert 'class="x-axis"' in page.text and 'class="y-top"' in page.text
        assert "Updated less than a minute ago" in page.text or "Updated 1 minute ago" in page.text


async def test_a_pro_window_on_free_is_named_not_swapped(site: RunningServer) -> None:
    await site.ctx.iocs.upsert_iocs(_iocs())
    async with browser(site) as client:
        await sign_up(client, "ka@corp.example")
        page = await client.get("/account/dashboard", params={"window": "7d"})
        day = await client.get("/account/dashboard", params={"window": "1d"})
    assert page.status_code == 200 and 'class="current" data-testid="window-1d"' in page.text
    assert "7 days is a Pro feature" in page.text
    assert 'href="?window=7d"' not in page.text and "Pro feature</span>" in page.text
    assert _bars(page) == _bars(day) and len(_bars(page)) == 25  # the 1d hourly view, all of it
    assert 'data-testid="window-note"' not in day.text


async def test_an_unknown_window_names_the_allowed_ones(site: RunningServer) -> None:
    async with browser(site) as client:
        await _pro(site, client)
        page = await client.get("/account/dashboard", params={"window": "90d"})
    assert page.status_code == 200 and 'data-testid="window-note"' in page.text
    assert "There is no “90d” window: choose 1d, 7d, 30d, 365d." in page.text
    assert 'class="current" data-testid="window-7d"' in page.text


def test_the_age_of_the_figures() -> None:
    now = utcnow()
    assert ago((now - timedelta(minutes=19, seconds=30)).isoformat(), now) == "19 minutes ago"
    assert ago((now - timedelta(seconds=20)).isoformat(), now) == "less than a minute ago"
    assert ago((now - timedelta(hours=5)).isoformat(), now) == "5 hours ago"
    assert windows_for(1) == [("1d", True), ("7d", False), ("30d", False), ("365d", False)]
