"""``/account/usage`` and ``/account/dashboard``: what a person reads at a glance.

Usage comes from the same rate-limit counters the API charges (Redis or in-process), read without
charging. The dashboard shows the IOC statistics of the user's tier from the same cache entry as
``GET /api/v1/iocs/stats`` (``exporters.ioc_stats.cached_stats``), as tables, bars and an SVG chart.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import orjson

from config.tiers import TIERS
from exporters.ioc_stats import cached_stats
from exporters.precompute import known_windows
from store.accounts import expires_soon
from store.records import utcnow
from store.usage import UsageDay, UsageHistory
from web.base import PageHandler
from web.charts import Chart, bar_chart
from web.reads import web_budget

# The usage history's span: a bar per UTC day, today included.
HISTORY_DAYS = 30


class UsageHandler(PageHandler):
    """Per key: requests this minute and today against the tier's limits, when it was last used, and its
    requests and 429s per day over 30 days; the web budget likewise."""

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
        await self.ctx.limiter.tally.flush(self.ctx.accounts)  # this process's latest counts, before reading them
        charts = await history(self.ctx.accounts, [key.id for key in keys] + [web_budget(user.id)], utcnow())
        self.page("usage.html", rows=rows, tier=tier, web=web, charts=charts, web_id=web_budget(user.id),
                  soon=soon)


async def history(store: UsageHistory, ids: list[str], now: datetime) -> dict[str, Chart]:
    """Each id's requests per day over HISTORY_DAYS, with its 429s drawn apart."""
    days = [now.date() - timedelta(days=n) for n in range(HISTORY_DAYS - 1, -1, -1)]
    found = {(row.key_id, row.day): row for row in await store.usage_history(ids, days[0].isoformat())}
    charts = {}
    for key_id in ids:
        rows = [found.get((key_id, day.isoformat()), UsageDay(key_id, day.isoformat(), 0, 0)) for day in days]
        points = [(datetime.fromisoformat(row.day), row.requests) for row in rows]
        charts[key_id] = bar_chart(points, "%Y-%m-%d", "%d %b", [row.refused for row in rows])
    return charts


def windows_for(lookback_days: int) -> list[tuple[str, bool]]:
    """Every stats window, and whether the tier's IOC lookback allows it (the others show what Pro adds)."""
    return [(name, days <= lookback_days) for name, days in known_windows().items()]


def ago(moment: str, now: datetime) -> str:
    """How old the figures are, as "Updated N minutes ago" says it."""
    minutes = max(int((now - datetime.fromisoformat(moment)).total_seconds() // 60), 0)
    if minutes < 1:
        return "less than a minute ago"
    if minutes < 120:
        return f"{minutes} minute{'s' if minutes != 1 else ''} ago"
    return f"{minutes // 60} hours ago"


def stats_chart(stats: dict[str, Any]) -> Chart:
    """Hourly bars when the stats have them (1d), else daily: the bars add up to the total."""
    if "hourly" in stats:
        points = [(datetime.fromisoformat(h["hour"]), h["count"]) for h in stats["hourly"]]
        return bar_chart(points, "%Y-%m-%d %H:00 UTC", "%H:00")
    return bar_chart([(datetime.fromisoformat(d["date"]), d["count"]) for d in stats["daily"]],
                     "%Y-%m-%d", "%d %b")


def window_choice(asked: str, windows: list[tuple[str, bool]]) -> tuple[str, str | None]:
    """The window to show and, when it is not the one asked for, why: a Pro window on Free, or no such window.
    A window is never replaced without saying so."""
    allowed = [name for name, ok in windows if ok]
    shown = "7d" if "7d" in allowed else allowed[0]
    if not asked or asked in allowed:
        return asked or shown, None
    if asked in dict(windows):
        return shown, f"{known_windows()[asked]} days is a Pro feature: showing your plan's {shown} instead."
    return shown, f"There is no “{asked}” window: choose {', '.join(allowed)}. Showing {shown}."


class DashboardHandler(PageHandler):
    """The IOC stats of the user's tier, with a window selector within the tier's lookback."""

    async def get(self) -> None:
        tier = TIERS[self.user.tier]
        windows = windows_for(tier.ioc_lookback_days)
        window, note = window_choice(self.get_argument("window", ""), windows)
        now = utcnow()
        entry, _ = await cached_stats(self.ctx.iocs, self.ctx.cache, tier.name, window, now,
                                      self.ctx.settings.cache_ttl_seconds)
        stats = orjson.loads(entry.body)
        self.page("dashboard.html", stats=stats, window=window, windows=windows, tier=tier, note=note,
                  chart=stats_chart(stats), updated=ago(stats["generated_at"], now))
