"""GET /api/v1/stream: the live feed of new and changed articles and IOC records (SSE or NDJSON).

Each open stream holds one of its key's slots (Pro: 5, across every API process: ``EventLog.acquire_slot``)
and is a :class:`server.stream_hub.Subscriber` of its process's hub. Frames are written as they come,
``flush()`` awaited (tornado web.py, ``StaticFileHandler.get``); while a client does not take them they wait
in its bounded queue, and past the bound it is sent ``overflow`` (as far as its connection still takes
it) and disconnected.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from datetime import timedelta
from typing import Any

from tornado.iostream import StreamClosedError

from config.tiers import SCOPE_STREAM, Tier
from server.base import BaseHandler
from server.context import AppContext
from server.errors import RateLimited, bad_param
from server.feed_params import valid_id
from server.ioc_params import INCLUDE_WARNINGLISTED_PARAM
from server.openapi_parts import csv_param, ok, operation, param, per_tier
from server.stream_hub import SLOT_TTL, Frame, Hub, Subscriber, control_frame
from server.stream_params import CATEGORY_VALUES, last_event_id, parse_stream_filter
from store.base import StoreError
from store.ports.events import EVENT_KINDS, EventId
from store.query import IocFilters
from store.records import CONFIDENCES, INDUSTRY_TAGS, IOC_TYPES, SEVERITY_LABELS, iso, utcnow

NDJSON = "application/x-ndjson"
SSE = "text/event-stream"
# A collection run stamps its records' modified times up to its length before their events are appended
# (workers' task_time_limit is 15 minutes): a reset re-syncs from this much before the last id seen.
RESYNC_MARGIN = timedelta(hours=1)
OVERFLOW_GRACE_SECONDS = 10.0  # for the overflow event to reach a client that resumes reading
MAX_DURATION = 86_400
KEEPALIVE = {SSE: b": keepalive\n\n", NDJSON: b"\n"}


async def stream_hub(ctx: AppContext) -> Hub:
    """The process's hub, started on the first stream."""
    hub = ctx.extras.get("stream_hub")
    if hub is None:
        ctx.stores.events.poll_seconds = ctx.settings.stream_poll_seconds
        hub = ctx.extras["stream_hub"] = Hub(ctx.stores.events)
    await hub.start()
    return hub


async def close_hub(ctx: AppContext) -> None:
    hub = ctx.extras.pop("stream_hub", None)
    if hub is not None:
        await hub.close()


def _media_type(accept: str) -> str:
    return NDJSON if NDJSON in accept.lower() else SSE


class StreamHandler(BaseHandler):
    """Scope ``stream``, Pro: events as they are appended, after ``Last-Event-ID`` when resuming."""

    scope = SCOPE_STREAM

    def plan_allows(self, tier: Tier) -> bool:
        return tier.max_streams > 0

    def on_connection_close(self) -> None:
        self.gone = True
        subscriber: Subscriber | None = getattr(self, "subscriber", None)
        if subscriber is not None:
            subscriber.wake.set()

    async def get(self) -> None:
        self.gone = False
        feed = await self._feed()
        flt = parse_stream_filter(self.params, self.request.query_arguments, self.principal.tier, utcnow(), feed)
        resume = last_event_id(self.params, self.request.headers.get("Last-Event-ID"))
        duration = self.params.integer("duration", None, minimum=1, maximum=MAX_DURATION)
        self.media = _media_type(self.request.headers.get("Accept", ""))
        hub = await stream_hub(self.ctx)
        key, tier = self.principal.key, self.principal.tier
        self.subscriber = Subscriber(key.id, uuid.uuid4().hex, flt, self.ctx.settings.stream_buffer_events)
        if not await hub.events.acquire_slot(key.id, self.subscriber.slot, tier.max_streams, SLOT_TTL):
            raise RateLimited(
                f"this key already holds {tier.max_streams} open streams; close one first",
                code="too_many_streams",
                details={"limit": tier.max_streams, "tier": tier.name, "upgrade_url": self.ctx.settings.upgrade_url},
            )
        self.subscriber.on_overflow = self._overflowed
        try:
            await asyncio.wait_for(self._run(hub, resume), duration) if duration else await self._run(hub, resume)
        except (StreamClosedError, TimeoutError):
            pass  # the client left, or the asked duration passed
        finally:
            hub.leave(self.subscriber)
            # A slot not given back (the log unreachable, or closed as the server stops) lapses in SLOT_TTL.
            with contextlib.suppress(StoreError, RuntimeError):
                await hub.events.release_slot(key.id, self.subscriber.slot)

    async def _feed(self) -> IocFilters | None:
        """The filters of the saved feed ``feed`` names (the caller's own; any other id is a 400)."""
        feed_id = self.params.raw("feed")
        if feed_id is None:
            return None
        user = self.principal.user.id
        found = await self.ctx.stores.feeds.get_feed(user, feed_id.lower()) if valid_id(feed_id) else None
        if found is None:
            raise bad_param("feed", "no feed of yours has this id (GET /api/v1/feeds lists them)")
        return IocFilters.from_params(found.filters)

    async def _run(self, hub: Hub, resume: EventId | None) -> None:
        self.set_header("Content-Type", f"{self.media}; charset=utf-8")
        self.set_header("X-Accel-Buffering", "no")  # proxies that buffer (nginx) pass each frame on at once
        if resume is None:
            await hub.catch_up(self.subscriber, hub.cursor, self._frames)  # live from now, before the headers
        await self._send(b": stream open\n\n" if self.media == SSE else b"")
        if resume is not None:
            await hub.catch_up(self.subscriber, await self._resumable(hub, resume), self._frames)
        await self._live()

    async def _resumable(self, hub: Hub, resume: EventId) -> EventId | None:
        """``resume``, or (when the log no longer holds what followed it) the hub's position, announced by one
        ``reset`` event naming the ``modified_since`` to re-sync from with the list endpoints."""
        if (await hub.events.horizon()).resumable(resume):
            return resume
        since = iso(resume.at - RESYNC_MARGIN)
        await self._frames(
            [
                control_frame(
                    "reset",
                    hub.cursor,
                    {
                        "reason": "the events after last_event_id are no longer kept; re-sync with modified_since "
                        "(GET /api/v1/articles) and since (GET /api/v1/iocs), then read on",
                        "last_event_id": str(resume),
                        "modified_since": since,
                    },
                )
            ]
        )
        return hub.cursor

    async def _live(self) -> None:
        keepalive, subscriber = self.ctx.settings.stream_keepalive_seconds, self.subscriber
        while not self.gone and not subscriber.overflowed:
            if not subscriber.queue:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(subscriber.wake.wait(), keepalive)
            if subscriber.overflowed or self.gone:
                break  # nothing more after the overflow frame
            frames = subscriber.take()
            await (self._frames(frames) if frames else self._send(KEEPALIVE[self.media]))
        if subscriber.overflowed:
            await self.flush()  # the overflow frame, buffered when the queue overflowed

    def _overflowed(self) -> None:
        """The queue is full: the client is told where it was, then the connection ends (after a grace, for a
        client whose earlier frames are still on their way)."""
        last = self.subscriber.delivered
        frame = control_frame(
            "overflow",
            None,
            {
                "reason": "the client fell behind; reconnect with Last-Event-ID to resume",
                "last_event_id": str(last) if last is not None else None,
            },
        )
        # Only buffered: the handler's loop flushes it once the write under way is done (Tornado takes one
        # flush at a time; a second would replace the future the first is awaited through).
        self.write(frame.form(self.media == NDJSON))
        asyncio.get_running_loop().call_later(OVERFLOW_GRACE_SECONDS, self._close_connection)

    def _close_connection(self) -> None:
        if self.request.connection is not None and not self._finished:
            self.request.connection.close()  # type: ignore[attr-defined]

    async def _frames(self, frames: list[Frame]) -> None:
        if frames:
            ndjson = self.media == NDJSON
            self.write(b"".join(f.form(ndjson) for f in frames))
            self.subscriber.delivered = frames[-1].id  # written: ahead of any overflow frame written after it
            await self.flush()

    async def _send(self, data: bytes) -> None:
        self.write(data)
        await self.flush()


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [(r"/api/v1/stream", StreamHandler, {"ctx": ctx})]


_EVENT_DOC = (
    "Server-sent events (text/event-stream), or with `Accept: application/x-ndjson` one JSON object a line "
    '(`{"id", "event", "data"}`). Events: `article` (the list form of a new or changed article), `ioc` '
    "(a new or changed IOC record as /api/v1/iocs shows it), `ioc-revoked` (a revoked record as /api/v1/iocs "
    "shows it, `status` revoked); each has an `id` "
    "(`<milliseconds>-<sequence>`) that only grows, in one order for every client, and one JSON object as "
    "`data`. Control events: `reset` (the events after the resume id are no longer kept: re-sync from its "
    "`modified_since`, then read on) and `overflow` (the client fell behind its buffer; it is disconnected "
    "and resumes from `last_event_id`: the last id it was sent, or where its stream began when it was sent "
    "none, `0-0` being before every event). A comment line (`: keepalive`; a blank line in NDJSON) keeps an "
    "idle connection open. Filters of one kind (article: a category slug, `severity`, `min_severity`; "
    "IOC: `type`, `confidence`, `industry`, a source category) narrow the default `kinds` to that kind."
)
_ID_SCHEMA = {"type": "string", "pattern": "^[0-9]+-[0-9]+$"}
_KIND_SCHEMA = {"type": "string", "enum": [*EVENT_KINDS, "reset", "overflow"]}
OPENAPI_SCHEMAS: dict[str, Any] = {
    "StreamEvent": {
        "type": "object",
        "description": "One NDJSON line.",
        "required": ["event", "data"],
        "properties": {"id": _ID_SCHEMA, "event": _KIND_SCHEMA, "data": {"type": "object"}},
    },
    "StreamSseEvent": {
        "type": "object",
        "description": "One server-sent event; `data` is one JSON object's text.",
        "required": ["event", "data"],
        "properties": {"id": _ID_SCHEMA, "event": _KIND_SCHEMA, "data": {"type": "string"}},
    },
}
OPENAPI_PATHS: dict[str, Any] = {
    "/api/v1/stream": operation(
        "stream",
        "Live stream of new articles and IOC records (Pro)",
        f"Scope stream, Pro plan; each key holds at most {per_tier('max_streams')} open streams (the next: "
        "429 too_many_streams). Opening a stream costs one request. Unknown parameters are refused (400 "
        "unknown_parameter). Events are kept at least CTIWIRE_STREAM_RETENTION_DAYS (default 7) days for "
        "resuming. " + _EVENT_DOC,
        [
            csv_param(
                "kinds", "Event kinds, comma-separated (default: all, or the kind the filters name).", EVENT_KINDS
            ),
            csv_param("type", "IOC types (IOC events).", IOC_TYPES),
            csv_param("confidence", "IOC confidences (IOC events).", CONFIDENCES),
            csv_param("industry", "Sectors of IOC records, any-match; aliases are folded.", INDUSTRY_TAGS),
            csv_param(
                "category",
                "Article category slugs (article events) and source categories (IOC events).",
                CATEGORY_VALUES,
            ),
            csv_param(
                "severity", "Article severity buckets (article events); exclusive with min_severity.", SEVERITY_LABELS
            ),
            param(
                "min_severity",
                {"type": "number", "minimum": 0, "maximum": 10},
                "Articles scoring at least this (article events); exclusive with severity.",
            ),
            csv_param("source", "Exact source names: an article's source, any source of an IOC record."),
            INCLUDE_WARNINGLISTED_PARAM,
            param(
                "feed",
                {
                    "type": "string",
                    "format": "uuid",
                    "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
                },
                "The id of one of your saved feeds (/api/v1/feeds): IOC records must also pass its filters (type, "
                "confidence, category, industry, source, threat_actor, severity), read when the stream opens; "
                "narrows the default `kinds` to IOC events. Not one of your feeds: 400 naming `feed`.",
            ),
            param(
                "last_event_id",
                {"type": "string", "pattern": "^[0-9]{1,15}-[0-9]{1,15}$"},
                "Resume after this id (as the Last-Event-ID header, which wins when both are sent).",
            ),
            param(
                "duration",
                {"type": "integer", "minimum": 1, "maximum": MAX_DURATION},
                "Close the stream after this many seconds (scripts, smoke tests); default: open until closed.",
            ),
        ],
        {
            "200": ok(
                "The stream, open until the client closes it (or `duration` passes)",
                {
                    SSE: {"$ref": "#/components/schemas/StreamSseEvent"},
                    NDJSON: {"$ref": "#/components/schemas/StreamEvent"},
                },
            )
        },
    ),
}
