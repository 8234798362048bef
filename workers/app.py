"""The Celery app (Redis broker from ``CTIWIRE_REDIS_URL``) and its beat schedule.

Reliability settings follow Celery's user guide ("Tasks", acks_late): a task is acknowledged only
after it finished, and a worker killed mid-task (SIGKILL) leaves the message to be redelivered after
the broker's visibility timeout, so every task must be idempotent (they are: builds are pure functions
of the data version, written by rename).
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from celery.signals import beat_init, worker_ready

from config.settings import Settings, load_settings


def beat_schedule(settings: Settings, source_names: list[str]) -> dict[str, dict[str, Any]]:
    """Precompute exports and stats on a period, deliver webhooks every few seconds; ingest every enabled
    source on its own period."""
    schedule: dict[str, dict[str, Any]] = {
        "precompute-exports": {"task": "ctiwire.precompute_all",
                               "schedule": float(settings.precompute_interval_seconds)},
        # Due webhooks: a round is short (one batch per webhook when caught up), and a round that finds
        # another still holding a webhook skips it.
        "deliver-webhooks": {"task": "ctiwire.deliver_webhooks", "schedule": settings.webhook_interval_seconds,
                             "options": {"expires": settings.webhook_interval_seconds * 2}},
    }
    for name in source_names:
        schedule[f"ingest:{name}"] = {"task": "ctiwire.ingest_source", "args": (name,),
                                      "schedule": float(settings.ingest_interval_seconds)}
    return schedule


def make_celery(settings: Settings, source_names: list[str] | None = None) -> Celery:
    app = Celery("ctiwire", broker=settings.redis_url or "redis://127.0.0.1:6379/0", include=["workers.tasks"])
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        task_time_limit=settings.task_time_limit_seconds,
        task_soft_time_limit=max(settings.task_time_limit_seconds - 30, 30),
        broker_transport_options={"visibility_timeout": settings.task_visibility_timeout_seconds},
        broker_connection_retry_on_startup=True,
        timezone="UTC",
        enable_utc=True,
        worker_hijack_root_logger=False,
        beat_schedule=beat_schedule(settings, source_names or []),
    )
    return app


def _source_names(settings: Settings) -> list[str]:
    """Enabled sources, for one beat entry each (a Celery beat task per source)."""
    try:
        from config.sources import load_sources
    except ImportError:  # the source list is not configured in this build
        return []
    return [s.name for s in load_sources(settings) if s.enabled]


SETTINGS = load_settings()
app = make_celery(SETTINGS, _source_names(SETTINGS))


def precompute_at_start(sender: Any = None, **_: Any) -> None:
    """Beat's first period ends ``precompute_interval_seconds`` (15 minutes) after it starts, and a fresh
    production stack would serve cold exports meanwhile: queue one precompute at start, then on
    schedule. Idempotent like every task, so a restarted beat costs one more round of cache checks."""
    app.send_task("ctiwire.precompute_all")


def recheck_at_start(sender: Any = None, **_: Any) -> None:
    """A worker starting on a new release may hold newer warninglists than the stored IOCs were checked
    against: queue the check (the task returns at once when the versions agree)."""
    app.send_task("ctiwire.recheck_warninglists")


beat_init.connect(precompute_at_start)
worker_ready.connect(recheck_at_start)
