"""GET /api/v1/iocs and /api/v1/iocs/stats (spec, IOCs)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import orjson

from config.tiers import SCOPE_IOCS, SCOPE_STATS, Tier
from exporters.ioc_stats import STATS_DEFAULT_WINDOW, cached_stats, default_stats_window
from exporters.precompute import known_windows, tier_windows
from server.base import BaseHandler, lookback_and_cost
from server.cached_responses import write_entry
from server.context import AppContext
from server.errors import bad_param
from server.ioc_params import (
    COUNT_STRATEGY_PARAM,
    DEFAULT_IOC_LIMIT,
    IOC_FILTER_PARAMS,
    IocRequest,
    Position,
    ioc_cursor,
    parse_ioc_request,
)
from server.openapi_parts import LOOKBACK_HEADER, bad_request, header, limit_param, ok, operation, param, per_tier
from server.params import MAX_INTEGER
from server.streaming import ChunkWriter, ClientGone
from store.base import ioc_row_position
from store.cache import NearMap, body_etag, near_map
from store.decay import STATUSES
from store.ports import IocStore
from store.query import IocQuery, status_clock
from store.records import CONFIDENCES, IOC_TYPES, RECENT_LINKS, SEVERITY_LABELS, parse_stored, utcnow

# The id under which the STIX export and TAXII carry the record, so a REST result leads straight to it.
STIX_ID_DOC = ("Stable id of the record's STIX 2.1 object, as in the STIX export and TAXII: `indicator--` plus "
               "the UUIDv5 of type and value, or `vulnerability--` for a CVE")


# A page of up to this many rows (the default page is 100) is read whole, sent with its length in one
# write, and kept until the next write: a polling SIEM's repeated request is then answered from memory.
# Larger pages stream.
SMALL_PAGE_ROWS = 200
PAGES_KEPT = 128  # of at most ~80 KB each
STREAM_BATCH = 2500  # rows read at a time for a larger page (about 1 MB), the next read while one is written
INSERT_SLACK = 100  # rows read at a time past a streamed page's own rows, up to its peeked end


@dataclass(frozen=True, slots=True)
class KeptPage:
    """A small page's body and ETag, with the lower bound it was read at, how many records matched
    then, when known exactly without a scan (None otherwise), and the next page's cursor (None: the last)."""

    body: bytes
    etag: str
    since: datetime | None
    rows: int | None
    next: str | None
    until: datetime | None = None  # read again from then on: scores and statuses move with the clock


# A kept page's scores are at most this old (a point a day at the fastest default half-life), and it is
# read again once one of its records reaches its valid_until (store.decay): a status never lags.
SCORES_KEPT = timedelta(minutes=1)
_VALID_UNTIL = re.compile(rb'"valid_until":"([^"]+)"')


def keeps_until(body: bytes, now: datetime) -> datetime:
    """When a page read at ``now`` must be read again: ``SCORES_KEPT`` on, or the first ``valid_until``
    after ``now`` among its rows, whichever comes first."""
    ahead = [t for t in map(parse_stored, (m.decode() for m in _VALID_UNTIL.findall(body))) if t > now]
    return min([now + SCORES_KEPT, *ahead])


@dataclass(frozen=True, slots=True)
class Totals:
    """meta.total and meta.total_estimated of a request, and the exact match count when known."""

    total: int | None
    estimated: bool
    rows: int | None


async def count_totals(store: IocStore, query: IocQuery, strategy: str) -> Totals:
    """The total ``strategy`` asks for (server.ioc_params.COUNT_STRATEGIES): the estimate costs the same at
    any data size (IocStore.estimate_iocs); an exact count scans only when the estimate is not exact."""
    if strategy == "none":
        return Totals(None, False, None)
    n, exact = await store.estimate_iocs(query)
    if strategy == "exact" and not exact:
        n, exact = await store.count_iocs(query), True
    return Totals(n, not exact, n if exact else None)


def _head(totals: Totals, query: IocQuery, next_cursor: str | None) -> bytes:
    meta: dict[str, Any] = {"total": totals.total, "total_estimated": totals.estimated, "limit": query.limit,
                            "offset": query.offset}
    if next_cursor is not None:  # absent on the last page, as X-Next-Cursor
        meta["next_cursor"] = next_cursor
    return b'{"meta":' + orjson.dumps(meta) + b',"data":['


def _page_key(version: int, request: IocRequest) -> tuple[Any, ...]:
    """A page bounded by the lookback floor is one key for as long as the data version holds, however the
    floor (:func:`store.records.lookback_floor`, which moves with the clock) has moved; a ``since`` the
    caller chose above the floor is part of the key."""
    # The clock is checked by KeptPage.until, the floor by the lookback's days and the kept page's ``since``.
    query, window = replace(request.query, now=None, floor=None), request.window
    if query.since == window.floor:
        return version, replace(query, since=None), window.lookback_days, request.count_strategy
    return version, query, window.lookback_days, request.count_strategy


# Small pages being read, by (store, page key, lower bound, status second): the requests of one second that all
# find the kept page stale (the lookback floor moved) await one count and read instead of each making its own.
_READING: dict[tuple[Any, ...], asyncio.Future[KeptPage]] = {}


async def _small_page(store: IocStore, pages: NearMap[KeptPage], request: IocRequest, secret: str) -> KeptPage:
    """:func:`_read_small_page`, once at a time for the same page, bound and second."""
    key = _page_key(await store.data_version(), request)
    flight = (id(store), key, request.query.since, status_clock(request.query))
    reading = _READING.get(flight)
    if reading is None:
        reading = asyncio.ensure_future(_read_small_page(store, pages, request, secret, key))
        _READING[flight] = reading
        reading.add_done_callback(lambda _: _READING.pop(flight, None))
    return await asyncio.shield(reading)  # a caller that goes away leaves the others their page


async def _read_small_page(store: IocStore, pages: NearMap[KeptPage], request: IocRequest, secret: str,
                           key: tuple[Any, ...]) -> KeptPage:
    """The kept page, still exact, or a new one read and kept. Without a write, rows only leave the set as
    the floor moves past them, so an unchanged exact count means the same rows: a moved floor costs a
    count (or, with no exact count at hand, a new read). The row after the page, read with it, tells
    whether another page follows."""
    query = request.query
    page, totals = pages.get(key), None
    now = status_clock(query)
    if page is not None and page.until is not None and now >= page.until:
        page = None
    if page is not None and page.since != query.since:
        totals = await count_totals(store, query, request.count_strategy)
        same = totals.rows is not None and totals.rows == page.rows
        page = replace(page, since=query.since) if same else None  # the same exact total: the same head too
    if page is None:
        totals = totals or await count_totals(store, query, request.count_strategy)  # a moved floor's count serves
        rows = [encoded async for batch in store.iter_ioc_rows(replace(query, limit=query.limit + 1))
                for encoded in batch]
        following = ioc_cursor(secret, ioc_row_position(rows[query.limit - 1])) if len(rows) > query.limit else None
        body = _head(totals, query, following) + b",".join(rows[:query.limit]) + b"]}"
        page = KeptPage(body, body_etag(body), query.since, totals.rows, following, keeps_until(body, now))
    pages.put(key, page)
    return page


async def write_ioc_list(handler: BaseHandler, request: IocRequest) -> None:
    """``{"meta": {...}, "data": [...]}`` of ``request``, its window headers first, and ``X-Next-Cursor``
    (also ``meta.next_cursor``) when another page follows."""
    for name, value in request.headers.items():
        handler.set_header(name, value)
    handler.set_header("Content-Type", "application/json; charset=utf-8")
    store, query, secret = handler.ctx.iocs, request.query, handler.ctx.settings.secret_key
    if query.limit > SMALL_PAGE_ROWS:
        await stream_ioc_list(handler, query, await count_totals(store, query, request.count_strategy))
        return
    page = await _small_page(store, near_map(handler.ctx.cache, "ioc-pages", PAGES_KEPT), request, secret)
    if page.next is not None:
        handler.set_header("X-Next-Cursor", page.next)
    handler.known_etag = page.etag
    handler.finish(page.body)


async def _page_end(store: IocStore, query: IocQuery) -> Position | None:
    """The position of the page's last record when another follows: a two-row peek there."""
    peek = replace(query, offset=query.offset + query.limit - 1, limit=2)
    rows = [encoded async for batch in store.iter_ioc_rows(peek) for encoded in batch]
    return ioc_row_position(rows[0]) if len(rows) == 2 else None


async def stream_ioc_list(handler: BaseHandler, query: IocQuery, totals: Totals) -> None:
    """The list written in chunks, so 10,000 rows never sit in memory twice. The page ends at the record
    peeked first (its cursor leaves in the headers): records inserted before it meanwhile are read on to it,
    so a cursor walk never skips one."""
    end = await _page_end(handler.ctx.iocs, query)
    following = None if end is None else ioc_cursor(handler.ctx.settings.secret_key, end)
    if following is not None:
        handler.set_header("X-Next-Cursor", following)
    writer = ChunkWriter(handler, handler.ctx.settings.stream_chunk_bytes)
    await writer.write(_head(totals, query, following))
    try:
        # Stored API forms joined per batch: no record is decoded or re-encoded on the way out.
        last = await _write_rows(writer, handler.ctx.iocs.iter_ioc_rows(query, STREAM_BATCH), b"", None)
        while end is not None and last is not None and last < end:
            more = replace(query, after=last, offset=0, limit=INSERT_SLACK)
            last = await _write_rows(writer, handler.ctx.iocs.iter_ioc_rows(more), b",", end)
        await writer.write(b"]}")
        await writer.flush()
    except ClientGone:
        return
    handler.finish()


async def _write_rows(writer: ChunkWriter, batches: AsyncIterator[list[bytes]], separator: bytes,
                      end: Position | None) -> Position | None:
    """Write the rows of ``batches`` (up to ``end`` when given); the last written row's position, None when
    none was (or, below ``end``, when the store had no more)."""
    last = None
    async for batch in batches:
        rows = batch if end is None else [r for r in batch if ioc_row_position(r) <= end]
        if rows:
            await writer.write(separator + b",".join(rows))
            separator, last = b",", ioc_row_position(rows[-1])
    return last


class IocListHandler(BaseHandler):
    """IOC records with the list filters; lookback Free 1 day, Pro 365 days."""

    scope = SCOPE_IOCS

    def tier_headers(self, tier: Tier) -> dict[str, str]:
        return lookback_and_cost(tier.ioc_lookback_days)

    async def get(self) -> None:
        request = parse_ioc_request(self.params, self.principal.tier, utcnow(), secret=self.ctx.settings.secret_key)
        await write_ioc_list(self, request)


class IocStatsHandler(BaseHandler):
    """Totals by type, confidence, source category and top sources, plus a daily series (Pro), from the cache."""

    scope = SCOPE_STATS

    def plan_allows(self, tier: Tier) -> bool:
        return tier.ioc_stats

    async def get(self) -> None:
        tier = self.principal.tier
        window = self.params.text("window", None, known_windows()) or default_stats_window(tier)
        if window not in tier_windows(tier):
            raise bad_param("window", f"exceeds the {tier.name} lookback")
        entry, status = await cached_stats(self.ctx.iocs, self.ctx.cache, tier.name, window,
                                           utcnow(), self.ctx.settings.cache_ttl_seconds)
        await write_entry(self, entry, status, attachment=False, fmt=self.format_id())


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [
        (r"/api/v1/iocs", IocListHandler, {"ctx": ctx}),
        (r"/api/v1/iocs/stats", IocStatsHandler, {"ctx": ctx}),
    ]


# Keyset paging (an extension: the spec's IOC list pages by offset alone): a cursor costs the same at any
# depth, where an offset skips every row before it.
CURSOR_PARAM = param(
    "cursor", {"type": "string"}, "Opaque signed cursor from X-Next-Cursor or meta.next_cursor: the page after "
    "the previous one in the list's order, however deep (an offset reads every row it skips). Give the same "
    "filters again. Tampered with or made for another list (an article cursor): 400 invalid_cursor; with a "
    "non-zero `offset`: 400 conflicting_parameters.")
OFFSET_PARAM = param("offset", {"type": "integer", "minimum": 0, "maximum": MAX_INTEGER, "default": 0},
                     "Rows to skip; deep pages cost more with every row skipped: follow the cursor instead.")
PAGE_PARAMS = [
    COUNT_STRATEGY_PARAM,
    limit_param(f"Page size; above the tier cap ({per_tier('ioc_results_max')}) it is reduced and X-Limit-Capped "
                "is set.", DEFAULT_IOC_LIMIT),
    OFFSET_PARAM,
    CURSOR_PARAM,
]
_LIST_PARAMS = [*IOC_FILTER_PARAMS, *PAGE_PARAMS]
WINDOW_HEADERS = {
    **LOOKBACK_HEADER,
    "X-Tier-Lookback-Clamped": header("true when `since` was clamped to the lookback", "boolean"),
    "X-Limit-Capped": header("true when `limit` exceeded the tier cap", "boolean"),
    "X-Next-Cursor": header("Cursor of the next page (as meta.next_cursor); absent on the last page"),
}

SCORE_DOC = ("0-100 now: confidence, source kind, independent sources and sightings, halved every half-life of "
             "its type since `last_seen` (README, \"Indicator score and lifecycle\"); 0 when revoked.")
STATUS_DOC = ("`revoked` once revoked (ctiwire iocs revoke, false-positive consensus); `expired` from `valid_until` "
              "on; else `active`. Lists, exports, TAXII and feeds show active records unless `status` asks.")
_RECENT_DOC = (f"The {RECENT_LINKS} most recently {{what}} at most (sorted); `{{count}}` says how many there "
               f"are in all")
# The report counts of a record (POST /api/v1/sightings), in the IOC resource and the lookups.
SIGHTING_COUNT_FIELDS: dict[str, Any] = {
    "sightings": {"type": "integer", "minimum": 0,
                  "description": "Distinct accounts that reported it seen (POST /api/v1/sightings); raises the "
                                 "score."},
    "false_positives": {"type": "integer", "minimum": 0,
                        "description": "Distinct accounts that reported it a false positive."},
}
OPENAPI_SCHEMAS: dict[str, Any] = {
    "Ioc": {"type": "object", "required": ["type", "value", "confidence", "source"], "properties": {
        "type": {"type": "string", "enum": list(IOC_TYPES)},
        "value": {"type": "string"},
        "confidence": {"type": "string", "enum": list(CONFIDENCES)},
        "source": {"type": "object", "properties": {"feed_name": {"type": "string"},
                                                     "category": {"type": "string"}}},
        "first_seen": {"type": "string", "format": "date-time"},
        "last_seen": {"type": "string", "format": "date-time"},
        "modified": {"type": "string", "format": "date-time"},
        "sources": {"type": "array", "items": {"type": "string"}},
        "industries": {"type": "array", "items": {"type": "string"}},
        "article_ids": {"type": "array", "items": {"type": "string", "format": "uuid"}, "maxItems": RECENT_LINKS,
                        "description": _RECENT_DOC.format(what="articles reporting it", count="article_count")},
        "cves": {"type": "array", "items": {"type": "string"}, "maxItems": RECENT_LINKS,
                 "description": _RECENT_DOC.format(what="CVEs reported with it", count="cve_count")},
        "techniques": {"type": "array", "items": {"type": "string"}, "maxItems": RECENT_LINKS,
                       "description": _RECENT_DOC.format(what="ATT&CK techniques reported with it",
                                                         count="technique_count")},
        "article_count": {"type": "integer", "minimum": 0, "description": "How many articles report it."},
        "cve_count": {"type": "integer", "minimum": 0, "description": "How many CVEs are reported with it."},
        "technique_count": {"type": "integer", "minimum": 0,
                            "description": "How many ATT&CK techniques are reported with it."},
        **SIGHTING_COUNT_FIELDS,
        "stix_id": {"type": "string", "description": STIX_ID_DOC},
        "threat_actors": {"type": "array", "items": {"type": "string"},
                          "description": "Canonical names of the threat actors named beside it."},
        "severity": {"type": "number", "minimum": 0, "maximum": 10,
                     "description": "The highest severity score of the articles that reported it (the `severity` "
                                    "filter's buckets read it)."},
        "severity_label": {"type": "string", "enum": list(SEVERITY_LABELS)},
        "score": {"type": "integer", "minimum": 0, "maximum": 100, "description": SCORE_DOC},
        "status": {"type": "string", "enum": list(STATUSES), "description": STATUS_DOC},
        "valid_until": {"type": "string", "format": "date-time",
                        "description": "When `score` falls below the threshold (it may lie before `last_seen` "
                                       "when the record starts below it); a new report moves it forward."},
        "revoked": {"type": "boolean", "description": "Withdrawn for everyone (`revoked_reason` says why)."},
        "revoked_at": {"type": "string", "format": "date-time", "nullable": True,
                       "description": "When it was revoked; `modified` moved to it, so date pollers see it."},
        "revoked_reason": {"type": "string", "nullable": True},
        "warninglisted": {"type": "boolean", "description": "The value is on a MISP warninglist (known-benign): "
                          "such records appear only with `include_warninglisted=true`."},
        "warninglists": {"type": "array", "items": {"type": "string"},
                         "description": "Names of the warninglists the value is on."},
    }},
    "IocList": {"type": "object", "required": ["meta", "data"], "properties": {
        "meta": {"type": "object", "properties": {
            "total": {"type": "integer", "nullable": True, "description": "Per `count_strategy`; null with `none`."},
            "total_estimated": {"type": "boolean",
                                "description": "true when `total` is a lower bound (an estimate that stopped "
                                               "counting at 10,000)."},
            "limit": {"type": "integer"}, "offset": {"type": "integer"},
            "next_cursor": {"type": "string",
                            "description": "Pass as `cursor` for the next page; absent on the last page."}}},
        "data": {"type": "array", "items": {"$ref": "#/components/schemas/Ioc"}},
    }},
    "IocStats": {"type": "object", "properties": {
        "window": {"type": "string"}, "since": {"type": "string", "format": "date-time"},
        "generated_at": {"type": "string", "format": "date-time"}, "total": {"type": "integer"},
        "by_type": {"type": "object", "additionalProperties": {"type": "integer"}},
        "by_confidence": {"type": "object", "additionalProperties": {"type": "integer"}},
        "by_category": {"type": "object", "additionalProperties": {"type": "integer"}},
        "warninglisted_excluded": {"type": "integer", "minimum": 0, "description": "Records of the window left "
                                   "out of every count here because their value is on a MISP warninglist."},
        "top_sources": {"type": "array", "items": {"type": "object", "properties": {
            "source": {"type": "string"}, "count": {"type": "integer"}}}},
        "daily": {"type": "array", "description": "Records per UTC day of `modified`, zero-filled, from the day "
                  "of `since` (partial) to today: the counts add up to `total`.",
                  "items": {"type": "object", "properties": {
                      "date": {"type": "string", "format": "date"}, "count": {"type": "integer"}}}},
        "hourly": {"type": "array", "description": "Only for the 1d window: the same records per UTC hour, "
                   "from the hour of `since` (partial) to the current one; the counts add up to `total`.",
                   "items": {"type": "object", "properties": {
                       "hour": {"type": "string", "format": "date-time"}, "count": {"type": "integer"}}}},
    }},
}

OPENAPI_PATHS: dict[str, Any] = {
    "/api/v1/iocs": operation(
        "iocs", "List IOC records",
        "Scope read:iocs. Ordered by first seen, then type and value. Walk every page with `cursor` "
        "(X-Next-Cursor): each record once, in order, at the same cost per page at any depth. Each record has its "
        "`score` now, `status` and `valid_until` (README, \"Indicator score and lifecycle\"); active records unless "
        "`status` says otherwise. A poll with `since` (or `modified_since`) returns every change: records revoked "
        "since then (revocation sets `modified` to its time; `ctiwire iocs revoke` or false-positive consensus) and "
        "records whose `valid_until` passed since then, with their new status.", _LIST_PARAMS,
        {"200": ok("IOC page", {"application/json": {"$ref": "#/components/schemas/IocList"}}, WINDOW_HEADERS),
         "400": bad_request(headers=LOOKBACK_HEADER)}),
    "/api/v1/iocs/stats": operation(
        "iocs", "IOC statistics (Pro)",
        "Scope read:stats, Pro plan. Totals of records added or updated in the window, with zero-filled "
        "series of the same records by the UTC day (and, for 1d, hour) they were added or updated.",
        [param("window", {"type": "string", "enum": list(known_windows()), "default": STATS_DEFAULT_WINDOW},
               "Time window, within the tier's IOC lookback (default 7d, or the whole lookback when shorter).")],
        {"200": ok("Statistics", {"application/json": {"$ref": "#/components/schemas/IocStats"}})}),
}
