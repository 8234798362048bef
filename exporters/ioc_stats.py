"""The IOC statistics document of GET /api/v1/iocs/stats, built once per (tier, window, data version)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import orjson

from config.tiers import TIERS, Tier
from exporters.build_once import Entry, make_entry, near_or_build, store_entry
from exporters.precompute import known_windows, tier_windows
from store.base import IocStats
from store.cache import Cache
from store.ports import IocStore
from store.records import iso

# The stats come in the exports' windows (one definition: exporters.precompute.tier_windows).
STATS_DEFAULT_WINDOW = "7d"


def default_stats_window(tier: Tier) -> str:
    """7d when the tier's lookback covers it, else the whole lookback."""
    windows = tier_windows(tier)
    return STATS_DEFAULT_WINDOW if STATS_DEFAULT_WINDOW in windows else next(reversed(windows))


def _daily(series: list[tuple[str, int]], days: int, end: datetime) -> list[dict[str, Any]]:
    """Zero-filled daily counts, oldest first, ending on ``end``'s day (UTC)."""
    counts = dict(series)
    dates = [(end.date() - timedelta(days=n)).isoformat() for n in range(days - 1, -1, -1)]
    return [{"date": d, "count": counts.get(d, 0)} for d in dates]


def stats_payload(stats: IocStats, window: str, since: datetime, now: datetime) -> dict[str, Any]:
    return {
        "window": window, "since": iso(since), "generated_at": iso(now),
        "total": stats.total, "by_type": stats.by_type, "by_confidence": stats.by_confidence,
        "by_category": stats.by_category,
        "top_sources": [{"source": name, "count": n} for name, n in stats.top_sources],
        "daily": _daily(stats.daily, known_windows()[window], now),
    }


def stats_key(tier: str, window: str, data_version: int, now: datetime) -> str:
    return f"ctiwire:stats:{tier}:{window}:{now.date().isoformat()}:v{data_version}"


async def build_stats(store: IocStore, window: str, now: datetime, data_version: int) -> Entry:
    since = now - timedelta(days=known_windows()[window])
    body = orjson.dumps(stats_payload(await store.ioc_stats(since), window, since, now))
    return make_entry(body, 1, data_version, "application/json", f"ctiwire-ioc-stats-{window}.json")


async def cached_stats(store: IocStore, cache: Cache, tier: str, window: str, now: datetime,
                       ttl: int) -> tuple[Entry, str]:
    version = await store.data_version()

    async def build() -> Entry:
        return await build_stats(store, window, now, version)

    return await near_or_build(cache, stats_key(tier, window, version, now), build, ttl=ttl)


async def precompute_stats(store: IocStore, cache: Cache, tier: str, now: datetime, ttl: int) -> int:
    version = await store.data_version()
    windows = tier_windows(TIERS[tier])
    for window in windows:
        await store_entry(cache, stats_key(tier, window, version, now), await build_stats(store, window, now,
                                                                                           version), ttl)
    return len(windows)


def stats_tiers() -> list[str]:
    """The tiers whose stats are precomputed: those that may read them (Pro)."""
    return [tier.name for tier in TIERS.values() if tier.ioc_stats]


async def precompute_every_stats(store: IocStore, cache: Cache, now: datetime, ttl: int) -> int:
    return sum([await precompute_stats(store, cache, tier, now, ttl) for tier in stats_tiers()])
