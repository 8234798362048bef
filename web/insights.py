"""``/account/usage`` and ``/account/dashboard``: what a person reads at a glance.

Usage comes from the same rate-limit counters the API charges (Redis or in-process), read without
charging. The dashboard shows the IOC statistics of the user's tier from the same cache entry as
``GET /api/v1/iocs/stats`` (``exporters.ioc_stats.cached_stats``), as tables, bars and an SVG chart.
"""

from __future__ import annotations

from typing import Any

import orjson

from config.tiers import TIERS
from exporters.ioc_stats import cached_stats
from exporters.precompute import known_windows
from store.accounts import expires_soon
from store.records import utcnow
from web.base import PageHandler
from web.reads import web_budget


class UsageHandler(PageHandler):
    """Per key: requests this minute and today against the tier's limits, and when it was last used."""

    async def get(self) -> None:
        user = self.user
        tier = TIERS[user.tier]
        keys = await self.ctx.accounts.list_keys(user.id)
        rows = []
        for key in keys:
            usage = await self.ctx.limiter.usage(key.id, tier)
            rows.append((key, usage))
        soon = {key.id for key in keys if expires_soon(key, utcnow())}  # flagged, like on the keys page
        web = await self.ctx.limiter.usage(web_budget(user.id), tier)
        self.page("usage.html", rows=rows, tier=tier, web=web, soon=soon)


def windows_for(lookback_days: int) -> list[tuple[str, bool]]:
    """Every stats window, and whether the tier's IOC lookback allows it (the others show what Pro adds)."""
    return [(name, days <= lookback_days) for name, days in known_windows().items()]


def chart(daily: list[dict[str, Any]], width: int = 720, height: int = 180) -> dict[str, Any]:
    """Bar geometry of the daily series for the SVG in dashboard.html (no script: the CSP allows none inline)."""
    top = max((d["count"] for d in daily), default=0) or 1
    step = width / max(len(daily), 1)
    scale = (height - 20) / top
    bars = [{"x": round(i * step, 2), "w": round(max(step - 1, 0.5), 2), "h": round(d["count"] * scale, 2),
             "date": d["date"], "count": d["count"]} for i, d in enumerate(daily)]
    return {"width": width, "height": height, "bars": bars, "top": top}


class DashboardHandler(PageHandler):
    """The IOC stats of the user's tier, with a window selector within the tier's lookback."""

    async def get(self) -> None:
        tier = TIERS[self.user.tier]
        windows = windows_for(tier.ioc_lookback_days)
        allowed = [name for name, ok in windows if ok]
        window = self.get_argument("window", "")
        if window not in allowed:  # the default, and what a Free user gets for a Pro window
            window = "7d" if "7d" in allowed else allowed[0]
        entry, _ = await cached_stats(self.ctx.iocs, self.ctx.cache, tier.name, window, utcnow(),
                                      self.ctx.settings.cache_ttl_seconds)
        stats = orjson.loads(entry.body)
        self.page("dashboard.html", stats=stats, window=window, windows=windows, tier=tier,
                  chart=chart(stats["daily"]))
