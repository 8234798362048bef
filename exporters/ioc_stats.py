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


# Windows this short also get an hourly series: a day drawn as one bar says nothing. The store's series
# is per hour through the window's second midnight (store.ioc_counters.HOURLY_DAYS), per day after.
HOURLY_MAX_DAYS = 1


def _buckets(start: datetime, end: datetime, step: timedelta, form: str) -> list[str]:
    """The labels of every ``step`` from ``start``'s to ``end``'s (both included, partial ones too)."""
    labels, at = [], start
    while at <= end:
        labels.append(at.strftime(form))
        at += step
    return labels


def _series(hourly: list[tuple[str, int]], since: datetime, now: datetime, hours: bool) -> list[dict[str, Any]]:
    """Zero-filled counts per UTC hour or day, oldest first, from the window's first (partial) bucket to
    the current one: their sum is the window's total."""
    width = 13 if hours else 10  # "YYYY-MM-DDTHH" or "YYYY-MM-DD", the prefixes of the store's hour labels
    counts: dict[str, int] = {}
    for label, n in hourly:
        counts[label[:width]] = counts.get(label[:width], 0) + n
    start = since.replace(minute=0, second=0, microsecond=0)
    labels = _buckets(start, now, timedelta(hours=1), "%Y-%m-%dT%H") if hours else \
        _buckets(start.replace(hour=0), now, timedelta(days=1), "%Y-%m-%d")
    key = "hour" if hours else "date"
    return [{key: label + (":00:00Z" if hours else ""), "count": counts.get(label, 0)} for label in labels]


def stats_payload(stats: IocStats, window: str, since: datetime, now: datetime) -> dict[str, Any]:
    payload = {
        "window": window, "since": iso(since), "generated_at": iso(now),
        "total": stats.total, "by_type": stats.by_type, "by_confidence": stats.by_confidence,
        "by_category": stats.by_category,
        "top_sources": [{"source": name, "count": n} for name, n in stats.top_sources],
        "daily": _series(stats.hourly, since, now, hours=False),
        # The counts above are the default lists' records; these were left out as known-benign values.
        "warninglisted_excluded": stats.warninglisted,
    }
    if known_windows()[window] <= HOURLY_MAX_DAYS:
        payload["hourly"] = _series(stats.hourly, since, now, hours=True)
    return payload


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
