"""The embedded mode's in-process schedule: the workers' job functions, run by the server itself.

With ``CTIWIRE_REDIS_URL`` set, Celery beat and workers do this instead and the server only reads the
cache (ARCHITECTURE.md, "Two ways to run"). Ingestion runs only when ``CTIWIRE_INGEST=on``, so that
``scripts/serve`` works offline.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from exporters import ioc_stats, precompute
from server.context import AppContext
from store.base import StoreError
from store.records import utcnow
from webhooks.delivery import Policy, deliver_due

log = logging.getLogger("ctiwire.scheduler")
Job = Callable[[AppContext], Awaitable[object]]


async def precompute_all(ctx: AppContext) -> None:
    """Every standard export and the stats, unless the data version already has them."""
    ttl = ctx.settings.cache_ttl_seconds
    version = await ctx.iocs.data_version()
    if ctx.extras.get("precomputed_version") == version:
        return
    built = await precompute.precompute_exports(ctx.stores, ctx.cache, utcnow(), ttl=ttl)
    await ioc_stats.precompute_every_stats(ctx.iocs, ctx.cache, utcnow(), ttl)
    ctx.extras["precomputed_version"] = version
    log.info("precomputed %d exports and the stats for data version %d", built, version)


async def _every(seconds: float, job: Job, ctx: AppContext) -> None:
    while True:
        try:
            await job(ctx)
        except (StoreError, OSError) as exc:  # an outage: the next tick retries
            log.warning("scheduled %s failed: %s", getattr(job, "__name__", "job"), exc)
        except Exception:  # a background job's bug must never take the API down with it
            log.exception("scheduled %s crashed", getattr(job, "__name__", "job"))
        await asyncio.sleep(seconds)


def start(ctx: AppContext, jobs_: list[tuple[float, Job]]) -> list[asyncio.Task[None]]:
    return [asyncio.create_task(_every(seconds, job, ctx)) for seconds, job in jobs_]


async def stop(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task


def embedded_jobs(ctx: AppContext) -> list[tuple[float, Job]]:
    """The schedule of the embedded mode; empty in production (Celery beat owns it there)."""
    if ctx.settings.redis_url:
        return []
    schedule: list[tuple[float, Job]] = [
        (float(ctx.settings.precompute_interval_seconds), precompute_all),
        (ctx.settings.webhook_interval_seconds, deliver_webhooks),
    ]
    if ctx.settings.ingest:
        schedule.append((float(ctx.settings.ingest_interval_seconds), ingest))
    return schedule


async def deliver_webhooks(ctx: AppContext) -> None:
    """One round of webhook deliveries (the Celery task ``ctiwire.deliver_webhooks`` in production)."""
    await deliver_due(ctx.stores, Policy.from_settings(ctx.settings), utcnow())


async def ingest(ctx: AppContext) -> None:
    """Collect every enabled source, then precompute for the new data version. Stored records are first
    checked against the warninglists again when this release ships other lists (the worker's start check)."""
    from config.sources import load_sources
    from ingest.pipeline import ingest_once
    from ingest.recheck import recheck_if_upgraded, revoking

    await recheck_if_upgraded(ctx.iocs, on_listed=revoking(ctx.stores))
    await ingest_once(ctx.stores, load_sources(ctx.settings))
    await precompute_all(ctx)
