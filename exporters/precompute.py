"""The precompute jobs: every standard (format, tier, window) export and the IOC stats.

The same functions run in Celery tasks (workers/) and in the embedded in-process schedule (application/scheduler.py),
and the server calls them on a cache miss, so a cached entry and an on-demand build are byte-identical.
Exports are dated by their ``as_of`` hour (the window ends there), not by the build's clock.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import orjson

from config.tiers import TIERS, Tier
from exporters.base import load_context
from exporters.build_once import Entry, build_in_thread, get_or_build, make_entry, store_entry
from exporters.registry import EXPORTERS, get_exporter
from store.cache import Cache
from store.ports import IocStore, Stores
from store.query import IocQuery
from store.records import Ioc, iso
from telemetry import metrics

EXPORT_FORMATS: tuple[str, ...] = tuple(EXPORTERS)
# The named windows offered to every tier whose IOC lookback covers them; each tier also gets its whole
# lookback as a window (its default), so a lookback that is none of these still has one (spec, Limits).
WINDOWS: dict[str, int] = {"1d": 1, "7d": 7, "30d": 30, "365d": 365}
DEFAULT_EXPORT_LIMIT = 100
Progress = Callable[[int], None]


def as_of(now: datetime) -> datetime:
    """The hour an export describes: builds within one hour are identical (and cacheable)."""
    return now.replace(minute=0, second=0, microsecond=0)


def window_name(days: int) -> str:
    return f"{days}d"


def tier_windows(tier: Tier) -> dict[str, int]:
    """The windows ``tier`` may ask for, shortest first: the standard ones within its IOC lookback and
    the whole lookback."""
    days = {n for n in WINDOWS.values() if n <= tier.ioc_lookback_days} | {tier.ioc_lookback_days}
    return {window_name(n): n for n in sorted(days)}


def known_windows() -> dict[str, int]:
    """Every window some tier may ask for (the ``window`` parameter's values), shortest first."""
    days = {n for tier in TIERS.values() for n in tier_windows(tier).values()}
    return {window_name(n): n for n in sorted(days)}


def default_window(tier: str) -> str:
    """The whole lookback of ``tier`` (Free 1d, Pro 365d)."""
    return window_name(TIERS[tier].ioc_lookback_days)


@dataclass(frozen=True, slots=True)
class ExportRequest:
    """One export: format, tier, window (or explicit ``since``) and the IOC list's filters."""

    format: str
    tier: str
    window: str | None = None
    since: datetime | None = None
    types: tuple[str, ...] = ()
    confidences: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    industries: tuple[str, ...] = ()
    limit: int = DEFAULT_EXPORT_LIMIT

    @property
    def standard(self) -> bool:
        """A precomputed parameter set: a named window, no filters, the default or the maximum limit."""
        filters = self.types or self.confidences or self.categories or self.industries
        limits = (DEFAULT_EXPORT_LIMIT, TIERS[self.tier].ioc_results_max)
        return self.since is None and self.window is not None and not filters and self.limit in limits

    def window_since(self, now: datetime) -> datetime:
        if self.since is not None:
            return self.since
        return as_of(now) - timedelta(days=known_windows()[self.window or default_window(self.tier)])

    def cache_key(self, data_version: int, now: datetime) -> str:
        """format, tier, window, normalised parameters and the data version."""
        params = orjson.dumps([sorted(self.types), sorted(self.confidences), sorted(self.categories),
                               sorted(self.industries), self.limit, self.since and iso(self.since)])
        digest = hashlib.sha256(params).hexdigest()[:16]
        window = self.window or "custom"
        return f"ctiwire:export:{self.format}:{self.tier}:{window}:{digest}:{iso(as_of(now))}:v{data_version}"

    def query(self, now: datetime) -> IocQuery:
        return IocQuery(types=self.types, confidences=self.confidences, categories=self.categories,
                        industries=self.industries, since=self.window_since(now), limit=self.limit)


async def collect_iocs(store: IocStore, query: IocQuery, progress: Progress | None = None,
                       delay: float = 0.0) -> list[Ioc]:
    rows: list[Ioc] = []
    async for batch in store.iter_iocs(query, batch_size=500):
        rows.extend(batch)
        if progress is not None:
            progress(len(rows))
        if delay:
            await asyncio.sleep(delay)
    return rows


async def build_export(stores: Stores, request: ExportRequest, now: datetime, data_version: int,
                       progress: Progress | None = None, delay: float = 0.0) -> Entry:
    """Query, encode and wrap one export as a cache entry (also the on-demand path)."""
    with metrics().build_seconds.labels(request.format).time():
        return await _build_export(stores, request, now, data_version, progress, delay)


async def _build_export(stores: Stores, request: ExportRequest, now: datetime, data_version: int,
                        progress: Progress | None, delay: float) -> Entry:
    iocs = await collect_iocs(stores.iocs, request.query(now), progress, delay)
    exporter = get_exporter(request.format)()
    context = await load_context(stores.articles, iocs, generated_at=as_of(now), since=request.window_since(now),
                                 until=as_of(now), tier=request.tier)
    # Encoding is CPU work: a thread keeps the server's event loop answering meanwhile.
    body = await build_in_thread(lambda: b"".join(exporter.encode(iocs, context)))
    return make_entry(body, len(iocs), data_version, exporter.media_type, exporter.filename(as_of(now)))


async def cached_export(stores: Stores, cache: Cache, request: ExportRequest, now: datetime, *,
                        ttl: int, on_demand_ttl: int, delay: float = 0.0) -> tuple[Entry, str]:
    """The export from the cache when current, else built once under the lock. ``delay``
    slows the build between batches: fault injection for the tests that kill a builder."""
    version = await stores.iocs.data_version()

    async def build() -> Entry:
        return await build_export(stores, request, now, version, delay=delay)

    life = ttl if request.standard else on_demand_ttl
    return await get_or_build(cache, request.cache_key(version, now), build, ttl=life)


def standard_requests(formats: Iterable[str] = EXPORT_FORMATS) -> list[ExportRequest]:
    """Every precomputed (format, tier, window, limit), for each tier that may export (Pro)."""
    return [ExportRequest(fmt, tier.name, window, limit=limit)
            for tier in TIERS.values() if tier.ioc_exports for fmt in formats for window in tier_windows(tier)
            for limit in (DEFAULT_EXPORT_LIMIT, tier.ioc_results_max)]


async def precompute_exports(stores: Stores, cache: Cache, now: datetime, *, ttl: int,
                             formats: Iterable[str] = EXPORT_FORMATS) -> int:
    """Build and store every standard export for the current data version; returns how many were built."""
    version = await stores.iocs.data_version()
    built = 0
    for request in standard_requests(formats):
        entry = await build_export(stores, request, now, version)
        await store_entry(cache, request.cache_key(version, now), entry, ttl)
        built += 1
    return built
