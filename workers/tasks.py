"""Thin, idempotent tasks: each takes names, opens the configured backends and calls one job function.

Store or cache outages retry with exponential backoff (Celery's ``autoretry_for`` + ``retry_backoff``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from celery.signals import task_failure, task_retry, task_success

from exporters import ioc_stats, precompute
from exporters.build_once import store_entry
from store.base import StoreUnavailable
from store.cache import Cache
from store.factory import make_cache, make_stores
from store.ports import Stores
from store.records import utcnow
from telemetry import metrics
from webhooks.delivery import Policy, deliver_due
from workers.app import SETTINGS, app

log = logging.getLogger("ctiwire.workers")
T = TypeVar("T")
RETRYING: dict[str, Any] = {
    "autoretry_for": (StoreUnavailable, ConnectionError, OSError),
    "retry_backoff": True,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 8,
}


async def _with_backends(job: Callable[[Stores, Cache], Awaitable[T]]) -> T:
    stores, cache = make_stores(SETTINGS), make_cache(SETTINGS)
    await stores.open()
    try:
        return await job(stores, cache)
    finally:
        await cache.close()
        await stores.close()


def run(job: Callable[[Stores, Cache], Awaitable[T]]) -> T:
    return asyncio.run(_with_backends(job))


@app.task(name="ctiwire.build_export", **RETRYING)
def build_export(fmt: str, tier: str, window: str, limit: int = precompute.DEFAULT_EXPORT_LIMIT) -> str:
    """Build one standard export into the cache; returns its key."""
    request = precompute.ExportRequest(fmt, tier, window, limit=limit)

    async def job(stores: Stores, cache: Cache) -> str:
        now = utcnow()
        version = await stores.iocs.data_version()
        entry = await precompute.build_export(stores, request, now, version, delay=SETTINGS.build_delay_ms / 1000)
        key = request.cache_key(version)
        await store_entry(cache, key, entry, SETTINGS.cache_ttl_seconds)
        return key

    return run(job)


@app.task(name="ctiwire.precompute_stats", **RETRYING)
def precompute_stats(tier: str) -> int:
    ttl = SETTINGS.cache_ttl_seconds
    return run(lambda stores, cache: ioc_stats.precompute_stats(stores.iocs, cache, tier, utcnow(), ttl))


@app.task(name="ctiwire.precompute_feed_exports", **RETRYING)
def precompute_feed_exports() -> int:
    """Build the default export of every saved feed of a Pro account (each distinct filter set once)."""

    ttl = SETTINGS.cache_ttl_seconds
    return run(lambda stores, cache: precompute.precompute_feed_exports(stores, cache, utcnow(), ttl=ttl))


@app.task(name="ctiwire.precompute_all", **RETRYING)
def precompute_all() -> int:
    """Fan out one task per standard export (so a kill loses one build, not all), the saved feeds' exports
    and the stats."""
    for request in precompute.standard_requests():
        build_export.delay(request.format, request.tier, request.window or precompute.default_window(request.tier),
                           request.limit)
    precompute_feed_exports.delay()
    for tier in ioc_stats.stats_tiers():
        precompute_stats.delay(tier)
    return len(precompute.standard_requests())


@app.task(name="ctiwire.rebuild_after_ingest", **RETRYING)
def rebuild_after_ingest() -> int:
    """After new data the data version moved: rebuild every standard export and the stats."""
    return int(precompute_all())


@app.task(name="ctiwire.ingest_source", **RETRYING)
def ingest_source(name: str) -> int:
    """Collect one source; queue the rebuild when it brought new data."""
    from config.sources import load_sources
    from ingest.pipeline import ingest_once

    async def job(stores: Stores, cache: Cache) -> int:
        report = await ingest_once(stores, load_sources(SETTINGS), only=name)
        return int(getattr(report, "articles_changed", 0))

    changed = run(job)
    if changed:
        rebuild_after_ingest.delay()
    return changed


@app.task(name="ctiwire.recheck_warninglists", **RETRYING)
def recheck_warninglists() -> int:
    """Check the stored IOCs against the warninglists again when they were checked against others (an upgrade
    of pymispwarninglists; queued at every worker start); queue the rebuild when records changed."""
    from ingest.recheck import recheck_if_upgraded, revoking

    async def job(stores: Stores, _cache: Cache) -> int:
        report = await recheck_if_upgraded(stores.iocs, on_listed=revoking(stores))
        return 0 if report is None else report.changed

    changed = run(job)
    if changed:
        rebuild_after_ingest.delay()
    return changed


@app.task(name="ctiwire.deliver_webhooks", **RETRYING)
def deliver_webhooks() -> int:
    """One round of webhook deliveries (beat runs it every ``webhook_interval_seconds``); each webhook is
    claimed, so overlapping rounds on several workers never deliver one webhook out of order."""
    policy = Policy.from_settings(SETTINGS)
    return run(lambda stores, _cache: deliver_due(stores, policy, utcnow()))


def _count(outcome: str) -> Callable[..., None]:
    def count(sender: Any = None, **_: Any) -> None:
        metrics().task_outcomes.labels(getattr(sender, "name", "unknown"), outcome).inc()
    return count


# Celery task outcomes for GET /metrics; a worker's samples reach the API's exposition when
# both share PROMETHEUS_MULTIPROC_DIR (one host), else the worker's own process holds them.
task_success.connect(_count("success"), weak=False)
task_failure.connect(_count("failure"), weak=False)
task_retry.connect(_count("retry"), weak=False)
