"""Answering from a cache entry: ETag, Last-Modified, X-Cache and 304 for a matching If-None-Match."""

from __future__ import annotations

import functools
from email.utils import format_datetime

from tornado.web import RequestHandler

from exporters.build_once import Entry
from store.records import parse_iso
from telemetry import metrics


def _matches(if_none_match: str, etag: str) -> bool:
    """RFC 9110 13.1.2: weak comparison, a list of tags, or ``*``."""
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or etag in tags


@functools.lru_cache(maxsize=512)
def _http_date(built_at: str) -> str:
    """RFC 9110 IMF-fixdate of an entry's build time; entries are served many times, built once."""
    return format_datetime(parse_iso(built_at), usegmt=True)


async def write_entry(handler: RequestHandler, entry: Entry, status: str, *, attachment: bool, fmt: str) -> None:
    """Send ``entry`` (or 304) with its validators and cache status; ``fmt`` labels the cache metric."""
    handler.set_header("ETag", entry.meta.etag)
    handler.set_header("Last-Modified", _http_date(entry.meta.built_at))
    handler.set_header("X-Cache", status)
    metrics().cache_results.labels(fmt, status).inc()
    handler.set_header("Cache-Control", "private, no-cache")  # revalidate by ETag every time
    if _matches(handler.request.headers.get("If-None-Match", ""), entry.meta.etag):
        handler.set_status(304)
        handler.finish()
        return
    handler.set_header("Content-Type", entry.meta.media_type)
    if attachment:
        handler.set_header("Content-Disposition", f'attachment; filename="{entry.meta.filename}"')
    # One write: the body is already in memory, and Tornado sends a large bytes object without copying
    # it (chunks would only add copies). Backpressure matters for bodies made while sending
    # (server.streaming), not for one that exists whole.
    handler.finish(entry.body)
