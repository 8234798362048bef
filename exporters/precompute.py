"""The precompute jobs: every standard (format, tier, window) export and the IOC stats.

The same functions run in Celery tasks (workers/) and in the embedded in-process schedule (application/scheduler.py),
and the server calls them on a cache miss, so a cached entry and an on-demand build are byte-identical.

A window starts exactly at its lookback (``store.records.lookback_floor``: now minus its days, to the
second), never at an hour boundary before it (spec, Limits: the tier lookback). An entry is cached per
(format, tier, window, parameters, data version) with the start it was built at and the oldest
``modified`` among its records: it answers every later start up to that moment, because until then the
same records are in the window (records only enter with a new data version), and up to the first
``valid_until`` among them: an expiry changes a record's status, and so the document, without a write
(store.decay). The cache then holds a document as long as its content holds, and no longer.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

import orjson

from config.tiers import TIERS, Tier
from exporters.base import load_context
from exporters.build_once import Entry, build_in_thread, get_or_build, make_entry, store_entry
from exporters.registry import EXPORTERS, get_exporter
from store.cache import Cache
from store.decay import instant, read_time
from store.exclusions import AccountExclusions
from store.ports import IocStore, Stores
from store.query import IocFilters, IocQuery
from store.records import Ioc, iso, lookback_floor, parse_iso, whole_second
from telemetry import metrics

EXPORT_FORMATS: tuple[str, ...] = tuple(EXPORTERS)
# The named windows offered to every tier whose IOC lookback covers them; each tier also gets its whole
# lookback as a window (its default), so a lookback that is none of these still has one (spec, Limits).
WINDOWS: dict[str, int] = {"1d": 1, "7d": 7, "30d": 30, "365d": 365}
DEFAULT_EXPORT_LIMIT = 100
# The read of an export whose account leaves records out: as far as needed to fill its limit.
UNBOUNDED_READ = 2**31 - 1
Progress = Callable[[int], None]


def as_of(now: datetime) -> datetime:
    """The hour in an export's file name."""
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
    """One export: format, tier, window (or explicit ``since``) and the IOC list's filters.

    ``saved`` marks the filters of a saved feed: precomputed (``feed_requests``) and kept as long as the
    standard exports, under a key naming the filters rather than the feed, so equal feeds share one build.
    """

    format: str
    tier: str
    window: str | None = None
    since: datetime | None = None
    filters: IocFilters = IocFilters()
    limit: int = DEFAULT_EXPORT_LIMIT
    saved: bool = False
    # The requesting account's exclusions (its allowlist): rows left out after the store query.
    exclusions: AccountExclusions | None = field(default=None, compare=False, hash=False)

    @property
    def standard(self) -> bool:
        """A precomputed parameter set: a named window, no filters (or a saved feed's), the default or the
        maximum limit."""
        limits = (DEFAULT_EXPORT_LIMIT, TIERS[self.tier].ioc_results_max)
        plain = (self.filters.empty or self.saved) and not self.excludes
        return self.since is None and self.window is not None and plain and self.limit in limits

    @property
    def excludes(self) -> bool:
        """Whether the account leaves some records out (its export is its own, not a shared build)."""
        return self.exclusions is not None and not self.exclusions.empty

    def window_since(self, now: datetime) -> datetime:
        """The window's start at ``now``: ``since``, or exactly the named window's days before ``now``."""
        if self.since is not None:
            return self.since
        return lookback_floor(known_windows()[self.window or default_window(self.tier)], now)

    def cache_key(self, data_version: int) -> str:
        """format, tier, window, normalised parameters and the data version (the start is checked by
        :func:`still_exact`, not keyed: a key per second would never be asked for twice)."""
        params = orjson.dumps([*self.filters.normalised(), self.limit, self.since and iso(self.since),
                               *([self.exclusions.digest] if self.exclusions and self.excludes else [])])
        digest = hashlib.sha256(params).hexdigest()[:16]
        window = self.window or "custom"
        return f"ctiwire:export:{self.format}:{self.tier}:{window}:{digest}:v{data_version}"

    def still_exact(self, now: datetime) -> Callable[[Entry], bool]:
        """Whether a cached entry holds exactly the records of the window at ``now`` (module docstring)."""
        start, at = self.window_since(now), self.status_time(now)

        def fresh(entry: Entry) -> bool:
            built, keeps, changes = entry.meta.floor, entry.meta.keeps_until, entry.meta.changes_at
            if changes is not None and at >= parse_iso(changes):
                return False  # one of its records expired since the build: it reads otherwise now
            return built is not None and parse_iso(built) <= start and (keeps is None or start <= parse_iso(keeps))

        return fresh

    def described_filters(self) -> tuple[tuple[str, str], ...]:
        """The filters as the API's parameters name them (the header of the list formats states them)."""
        named = self.filters.as_params()
        return (*((name, ",".join(values)) for name, values in named.items()), ("limit", str(self.limit)))

    def query(self, now: datetime) -> IocQuery:
        """The records at ``now``: active ones by default (store.query.DEFAULT_STATUSES), every change for a
        poll by date (``since``: expiries and revocations included)."""
        floor = lookback_floor(TIERS[self.tier].ioc_lookback_days, now)
        return self.filters.query(poll=self.since is not None, since=self.window_since(now), limit=self.limit,
                                  now=self.status_time(now), floor=floor)

    def status_time(self, now: datetime) -> datetime:
        """The time the records' statuses are read at: a poll by date at its millisecond (store.decay.instant),
        a window at the status clock."""
        return read_time(now, self.since is not None)

    def stamp(self, now: datetime) -> datetime:
        """The time the document is dated and its records' lifecycle read at. A window's export: the second
        (a build at the same second, on any process, is byte-identical). A poll by date: its millisecond, as
        its records are chosen (store.decay.instant), so the newest ``modified`` it holds, passed back as
        ``since``, lies after no expiry it left out."""
        return instant(now) if self.since is not None else whole_second(now)


async def collect_iocs(store: IocStore, query: IocQuery, progress: Progress | None = None,
                       delay: float = 0.0, exclusions: AccountExclusions | None = None) -> list[Ioc]:
    """The records of ``query``, ``query.limit`` at most; with ``exclusions``, the records they leave out are
    skipped and reading goes on until the limit is reached or the records run out."""
    rows: list[Ioc] = []
    skip = exclusions.excludes if exclusions is not None and not exclusions.empty else None
    batches = store.iter_iocs(query if skip is None else replace(query, limit=UNBOUNDED_READ), batch_size=500)
    try:
        async for batch in batches:
            rows.extend(batch if skip is None else (r for r in batch if not skip(r)))
            if progress is not None:
                progress(min(len(rows), query.limit))
            if len(rows) >= query.limit:
                return rows[: query.limit]
            if delay:
                await asyncio.sleep(delay)
    finally:
        close = getattr(batches, "aclose", None)  # an early return leaves the store's generator open
        if close is not None:
            await close()
    return rows


async def build_export(stores: Stores, request: ExportRequest, now: datetime, data_version: int,
                       progress: Progress | None = None, delay: float = 0.0) -> Entry:
    """Query, encode and wrap one export as a cache entry (also the on-demand path)."""
    with metrics().build_seconds.labels(request.format).time():
        return await _build_export(stores, request, now, data_version, progress, delay)


async def _build_export(stores: Stores, request: ExportRequest, now: datetime, data_version: int,
                        progress: Progress | None, delay: float) -> Entry:
    iocs = await collect_iocs(stores.iocs, request.query(now), progress, delay, request.exclusions)
    exporter = get_exporter(request.format)()
    since, stamp = request.window_since(now), request.stamp(now)
    context = await load_context(stores.articles, iocs, generated_at=stamp, since=since, until=stamp,
                                 tier=request.tier, filters=request.described_filters())
    # Encoding is CPU work: a thread keeps the server's event loop answering meanwhile.
    body = await build_in_thread(lambda: b"".join(exporter.encode(iocs, context)))
    oldest = min((ioc.modified for ioc in iocs), default=None)
    return make_entry(body, len(iocs), data_version, exporter.media_type, exporter.filename(as_of(now)),
                      iso(since), None if oldest is None else iso(oldest), _next_expiry(iocs, request.status_time(now)))


def _next_expiry(iocs: list[Ioc], at: datetime) -> str | None:
    """The first ``valid_until`` after ``at`` among ``iocs`` not revoked: when the export's content changes."""
    upcoming = min((i.valid_until for i in iocs if not i.revoked and i.valid_until > at), default=None)
    return None if upcoming is None else iso(upcoming)


async def cached_export(stores: Stores, cache: Cache, request: ExportRequest, now: datetime, *,
                        ttl: int, on_demand_ttl: int, delay: float = 0.0) -> tuple[Entry, str]:
    """The export from the cache when current, else built once under the lock. ``delay``
    slows the build between batches: fault injection for the tests that kill a builder."""
    version = await stores.iocs.data_version()

    async def build() -> Entry:
        return await build_export(stores, request, now, version, delay=delay)

    life = ttl if request.standard else on_demand_ttl
    return await get_or_build(cache, request.cache_key(version), build, ttl=life, fresh=request.still_exact(now))


def standard_requests(formats: Iterable[str] = EXPORT_FORMATS) -> list[ExportRequest]:
    """Every precomputed (format, tier, window, limit), for each tier that may export (Pro)."""
    return [ExportRequest(fmt, tier.name, window, limit=limit)
            for tier in TIERS.values() if tier.ioc_exports for fmt in formats for window in tier_windows(tier)
            for limit in (DEFAULT_EXPORT_LIMIT, tier.ioc_results_max)]


def feed_export(fmt: str, tier: Tier, filters: IocFilters, window: str | None = None,
                limit: int | None = None, since: datetime | None = None) -> ExportRequest:
    """The export of a saved feed's ``filters``; by default the tier's whole lookback and the default limit
    (MISP: the tier cap), as GET /api/v1/feeds/{id}/export/{format} without parameters asks."""
    chosen = limit or (tier.ioc_results_max if fmt == "misp" else DEFAULT_EXPORT_LIMIT)
    return ExportRequest(fmt, tier.name, None if since else (window or default_window(tier.name)), since=since,
                         filters=filters, limit=chosen, saved=True)


async def feed_requests(stores: Stores, formats: Iterable[str] = EXPORT_FORMATS) -> list[ExportRequest]:
    """The default export of every saved feed whose owner's plan exports, each distinct filter set once."""
    feeds = await stores.feeds.all_feeds()
    tiers = {owner: TIERS[(await stores.accounts.get_user(user_id=owner)).tier]
             for owner in dict.fromkeys(feed.user_id for feed in feeds)}
    requests: dict[str, ExportRequest] = {}
    for feed in feeds:
        tier = tiers[feed.user_id]
        if not tier.ioc_exports:
            continue
        filters = IocFilters.from_params(feed.filters)
        for fmt in formats:
            request = feed_export(fmt, tier, filters)
            requests.setdefault(request.cache_key(0), request)
    return list(requests.values())


async def precompute_exports(stores: Stores, cache: Cache, now: datetime, *, ttl: int,
                             formats: Iterable[str] = EXPORT_FORMATS) -> int:
    """Build and store every standard export and every saved feed's default export for the current data
    version; returns how many were built."""
    formats = tuple(formats)
    return await build_all(stores, cache, standard_requests(formats) + await feed_requests(stores, formats), now,
                           ttl)


async def precompute_feed_exports(stores: Stores, cache: Cache, now: datetime, *, ttl: int) -> int:
    """Every saved feed's default export (the workers' task for them); how many were built."""
    return await build_all(stores, cache, await feed_requests(stores), now, ttl)


async def build_all(stores: Stores, cache: Cache, requests: Iterable[ExportRequest], now: datetime, ttl: int) -> int:
    """Build and store each of ``requests`` for the current data version; how many were built."""
    version = await stores.iocs.data_version()
    built = 0
    for request in requests:
        entry = await build_export(stores, request, now, version)
        await store_entry(cache, request.cache_key(version), entry, ttl)
        built += 1
    return built
