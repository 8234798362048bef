"""Prometheus metrics of every ctiwire process, served by ``GET /metrics``.

One set of metrics, made on first use so that a process can choose the multi-process mode first: with
several API processes (``CTIWIRE_PROCESSES`` > 1) the CLI points ``PROMETHEUS_MULTIPROC_DIR`` at a
directory under the data dir before it forks, every process writes its samples there, and a scrape of
any process adds them all up (prometheus_client's multiprocess mode). A bottom room beside ``config``:
the store, ingestion, the exporters, the server and the workers all count into it, and none of its
imports point up.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest, multiprocess
from prometheus_client import values as prometheus_values
from prometheus_client.exposition import CONTENT_TYPE_LATEST

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


@dataclass(frozen=True, slots=True)
class Metrics:
    requests: Counter
    latency: Histogram
    refusals: Counter
    cache_results: Counter
    build_seconds: Histogram
    backend_errors: Counter
    ingest_last_success: Gauge
    ingest_failures: Counter
    task_outcomes: Counter
    enrich_failures: Counter


@cache
def metrics() -> Metrics:
    """The metrics, created once per process (after the CLI chose single- or multi-process mode)."""
    prometheus_values.ValueClass = prometheus_values.get_value_class()  # type: ignore[no-untyped-call] # honours PROMETHEUS_MULTIPROC_DIR now
    return Metrics(
        requests=Counter("ctiwire_http_requests_total", "HTTP requests answered", ["route", "method", "status"]),
        latency=Histogram("ctiwire_http_request_duration_seconds", "Time to answer a request", ["route"],
                          buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)),
        refusals=Counter("ctiwire_rate_limit_refusals_total", "Requests refused by a rate limit (429)", ["tier"]),
        cache_results=Counter("ctiwire_cache_results_total", "Cached documents served, by result",
                              ["format", "result"]),
        build_seconds=Histogram("ctiwire_export_build_seconds", "Time to build one IOC export", ["format"],
                                buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)),
        backend_errors=Counter("ctiwire_backend_errors_total", "Failed calls to a backing service", ["backend"]),
        ingest_last_success=Gauge("ctiwire_ingest_last_success_timestamp_seconds",
                                  "When a source was last collected successfully", ["source"],
                                  multiprocess_mode="max"),
        ingest_failures=Counter("ctiwire_ingest_failures_total", "Failed collections of a source", ["source"]),
        task_outcomes=Counter("ctiwire_task_outcomes_total", "Celery task outcomes", ["task", "outcome"]),
        enrich_failures=Counter("ctiwire_enrich_failures_total",
                                "Extractors that failed on one article (their output left empty)", ["extractor"]),
    )


def exposition() -> tuple[bytes, str]:
    """The text exposition of this process, or of every process writing to the multi-process directory."""
    if os.environ.get(MULTIPROC_ENV):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def prepare_multiprocess(directory: str) -> None:
    """Before forking API processes: one fresh directory for all of them (old files would add stale counts)."""
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if name.endswith(".db"):
            os.remove(os.path.join(directory, name))
    os.environ[MULTIPROC_ENV] = directory
