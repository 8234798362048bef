"""GET /api/v1/articles, /api/v1/articles/{id} and /api/v1/sources (spec, Endpoints).

A JSON page (at most 1,000 rows) is read with one query for ``limit + 1`` rows: the extra row says
whether a next page exists. An NDJSON/CSV export (up to 5,000 rows) is streamed instead: its end is
found first by a two-row peek at the page's last position, so ``X-Next-Cursor`` leaves with the
headers, and rows are then streamed up to that position (not merely ``limit`` rows), so an article
inserted during the request is never skipped by the next page. Either way cursor walks return every
row exactly once. A streamed page asked for by cursor reads the next page ahead while it is sent
(server.readahead), for the request that will ask for it.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import orjson

from config.tiers import SCOPE_ARTICLES, SCOPE_ARTICLES_EXPORT, Tier
from exporters.articles import CSV_COLUMNS, EXPANSIONS, csv_header, csv_lines, list_row, single_form, sparse
from server.article_params import (
    COUNT_STRATEGIES,
    FORMATS,
    MAX_OFFSET,
    ArticleRequest,
    next_cursor,
    parse_article_request,
)
from server.base import BaseHandler, lookback_and_cost, public_base
from server.context import AppContext
from server.errors import BadRequest, NotFoundError
from server.openapi_parts import (
    COST_HEADER,
    DATE_TIME_PARAM,
    LOOKBACK_HEADER,
    article_caps_sentence,
    bad_request,
    csv_param,
    header,
    limit_param,
    ok,
    operation,
    param,
    per_tier,
)
from server.readahead import ReadAhead
from server.streaming import ChunkWriter, ClientGone
from server.windows import within_lookback
from store import article_filters
from store.article_filters import ArticleFilter
from store.base import Position
from store.ports import ArticleStore
from store.query import ARTICLE_SORTS, ArticleQuery
from store.records import SEVERITY_LABELS, Source, iso, utcnow

MEDIA = {"json": "application/json; charset=utf-8", "ndjson": "application/x-ndjson",
         "csv": "text/csv; charset=utf-8"}
# A page streamed up to its peeked end may grow by the rows inserted meanwhile; this bounds it.
INSERT_SLACK = 1000


# Rows read from the store at a time, each batch written at once (one write and one join per
# batch, not per row); the next batch is read while one is written (store.base.keyset_pages).
STREAM_BATCH = 2500
Payload = bytes | dict[str, Any]  # a pre-encoded list-form row, or a row to encode (CSV, fields, expand)
Row = tuple[Position, Payload]
# A streamed page's next page read ahead (server.readahead): its end and rows, for at most this many walks
# at once (a 5,000-row NDJSON page is about 8 MB).
Ahead = tuple[Position | None, list[Row]]
READ_AHEAD_WALKS = 4


async def _slices(rows: list[Row]) -> AsyncIterator[Sequence[Row]]:
    """Rows already read (a JSON page, a page read ahead), in the batches a page read as it is sent is
    written in."""
    for start in range(0, len(rows), STREAM_BATCH):
        yield rows[start:start + STREAM_BATCH]


def _as_stored(request: ArticleRequest) -> bool:
    """Plain JSON and NDJSON rows stream the store's encoding of the list form as it is."""
    return request.fmt != "csv" and not request.fields


def _encode(payload: Payload) -> bytes:
    return payload if isinstance(payload, bytes) else orjson.dumps(payload)


async def _batches(store: ArticleStore, request: ArticleRequest, query: ArticleQuery) -> AsyncIterator[Sequence[Row]]:
    """Batches of ``query``'s rows in the form ``request`` renders."""
    if request.fmt == "csv" and not request.fields and not request.expand:  # every column: stored lines
        async for rows in store.iter_article_csv_rows(query, STREAM_BATCH):
            yield rows
        return
    if not request.expand:  # the stored list form serves every request without expansions
        async for rows in store.iter_article_rows(query, STREAM_BATCH):
            yield rows if _as_stored(request) else [(p, sparse(orjson.loads(b), request.fields)) for p, b in rows]
        return
    field = query.sort_field
    async for batch in store.iter_articles(query):
        yield [((getattr(a, field), a.id), sparse(list_row(a, request.expand), request.fields)) for a in batch]


async def _page_end(store: ArticleStore, request: ArticleRequest) -> Position | None:
    """The page's last position when another row follows it (a two-row peek), else None."""
    q = request.query
    peek = replace(q, offset=q.offset + q.limit - 1, limit=2)
    rows = [row async for batch in store.iter_article_rows(peek) for row in batch]
    return rows[0][0] if len(rows) == 2 else None


async def _ahead(store: ArticleStore, request: ArticleRequest) -> Ahead:
    """A streamed page read whole, ahead of its request: its end (the peek), then its rows."""
    end = await _page_end(store, request)
    return end, [row async for batch in _batches(store, request, request.query) for row in batch]


class ArticleListHandler(BaseHandler):
    """List, filter, full-text search, delta polling and bulk export in one endpoint."""

    basic_auth = True  # an export endpoint (NDJSON, CSV): tools that poll it may only know user and password

    def format_id(self) -> str:
        fmt = self.params.text("format", "json", MEDIA) or "json"
        return fmt

    def required_scope(self) -> str | None:
        return SCOPE_ARTICLES if self.format_id() == "json" else SCOPE_ARTICLES_EXPORT

    def plan_allows(self, tier: Tier) -> bool:
        return self.format_id() in tier.article_formats

    def tier_headers(self, tier: Tier) -> dict[str, str]:
        try:
            fmt = self.format_id()
        except BadRequest:  # the 400 that follows names the format; until then, the JSON cost
            fmt = "json"
        return lookback_and_cost(tier.article_lookback_days, fmt)

    async def get(self) -> None:
        now = utcnow()
        request = parse_article_request(self.params, self.principal.tier, now, self.ctx.settings.secret_key)
        await self.charge_format()
        for name, value in request.headers.items():
            self.set_header(name, value)
        articles, end = await self._plan(request)
        next_url = self._next(request, end) if end is not None else None
        self.set_header("Content-Type", MEDIA[request.fmt])
        if request.fmt != "json":
            self.set_header("Content-Disposition",
                            f'attachment; filename="ctiwire-articles-{now:%Y%m%dT%H%M%SZ}.{request.fmt}"')
        writer = ChunkWriter(self, self.ctx.settings.stream_chunk_bytes)
        try:
            await self._stream(writer, request, articles, now, next_url)
            await writer.flush()
        except ClientGone:  # the client left: stopping here closes the store iterator and its query
            return
        self.finish()

    async def _plan(self, request: ArticleRequest) -> tuple[AsyncIterator[Sequence[Row]], Position | None]:
        """The page's rows and, when another page follows, its last position (the next cursor)."""
        q = request.query
        if request.fmt == "json":  # at most 1,000 rows: one query reads the page and the row after it
            rows = [row async for batch in _batches(self.ctx.articles, request, replace(q, limit=q.limit + 1))
                    for row in batch]
            return _slices(rows[:q.limit]), (rows[q.limit - 1][0] if len(rows) > q.limit else None)
        key = await self._ahead_key(request)
        ahead = await self._read_ahead().take(key)
        end, first = ahead if ahead is not None else (await _page_end(self.ctx.articles, request), [])
        return await self._rows(request, end, first), end

    def _read_ahead(self) -> ReadAhead[Ahead]:
        reads = self.ctx.extras.get("article-read-ahead")
        if reads is None:  # a disabled cache keeps nothing near (store.cache.near_map), nor reads ahead
            reads = self.ctx.extras["article-read-ahead"] = ReadAhead(READ_AHEAD_WALKS if self.ctx.cache.keeps_near
                                                                      else 0)
        return reads

    async def _ahead_key(self, request: ArticleRequest) -> tuple[Any, ...]:
        return (await self.ctx.iocs.data_version(), request.fmt, request.fields, request.expand, request.query)

    async def _read_next(self, request: ArticleRequest, end: Position) -> None:
        """Start reading the page after this one (its cursor is ``end``), as its request will ask for it.

        Only a page asked for by cursor reads ahead: that client is walking. A first page is also what a
        poller asks for again and again, and reading its next page each time would double its cost.
        """
        if request.query.after is None:
            return
        following = replace(request, query=replace(request.query, after=end, offset=0))
        self._read_ahead().start(await self._ahead_key(following), _ahead(self.ctx.articles, following))

    def _next(self, request: ArticleRequest, end: Position) -> str:
        token = next_cursor(self.ctx.settings.secret_key, request.query.sort, end)
        self.set_header("X-Next-Cursor", token)
        return self._url(drop=("cursor", "offset"), add=[("cursor", token)])

    def _url(self, drop: tuple[str, ...] = (), add: list[tuple[str, str]] | None = None) -> str:
        """This request's full URL, never with the ``api_key`` parameter: a key is never echoed."""
        args = [(k, value.decode("utf-8", "replace")) for k, values in self.request.query_arguments.items()
                if k not in (*drop, "api_key") for value in values]
        query = urlencode([*args, *(add or [])])
        return f"{public_base(self.ctx.settings)}{self.request.path}" + (f"?{query}" if query else "")

    async def _rows(self, request: ArticleRequest, end: Position | None,
                    first: list[Row]) -> AsyncIterator[Sequence[Row]]:
        """Batches of the page's rows: up to the peeked end when there is a next page, else up to ``limit``;
        ``first`` is the page when it was read ahead (a read ahead without its end is read again).

        The page is read at its own size first. Only when rows inserted since the peek pushed the end
        further does it read on, at most ``INSERT_SLACK`` rows (never past the end).
        """
        if first and end is None:  # the last page, read ahead whole
            return _slices(first)
        if first and end in (positions := [row[0] for row in first]):  # read ahead up to its end: read on now
            await self._read_next(request, end)
            return _slices(first[:positions.index(end) + 1])
        return self._read(request, end)

    async def _read(self, request: ArticleRequest, end: Position | None) -> AsyncIterator[Sequence[Row]]:
        """The page's rows read as they are sent; once its end is read, the next page is read ahead."""
        query, last = request.query, None
        for _ in range(2):
            async for batch in _batches(self.ctx.articles, request, query):
                positions = [row[0] for row in batch] if end is not None else []
                if end in positions:
                    await self._read_next(request, end)
                    yield batch[:positions.index(end) + 1]
                    return
                yield batch
                last = batch[-1][0] if batch else last
            if end is None or last is None:
                return
            query = replace(request.query, after=last, offset=0, limit=INSERT_SLACK)

    async def _stream(self, writer: ChunkWriter, request: ArticleRequest, batches: AsyncIterator[Sequence[Row]],
                      now: datetime, next_url: str | None) -> None:
        if request.fmt == "ndjson":
            async for batch in batches:
                await writer.write(b"\n".join([_encode(payload) for _, payload in batch]) + b"\n")
        elif request.fmt == "csv":
            columns = tuple(c for c in CSV_COLUMNS if not request.fields or c == "id" or c in request.fields)
            await writer.write(csv_header(columns))
            async for batch in batches:
                stored = [payload for _, payload in batch if isinstance(payload, bytes)]  # CSV lines, every column
                rows = [payload for _, payload in batch if not isinstance(payload, bytes)]
                await writer.write(b"".join(stored) + (csv_lines(rows, columns) if rows else b""))
        else:
            await writer.write(b'{"meta":' + orjson.dumps(await self._meta(request, now)) + b',"data":[')
            separator = b""
            async for batch in batches:
                if batch:
                    await writer.write(separator + b",".join([_encode(payload) for _, payload in batch]))
                    separator = b","
            links = {"self": self._url(), **({"next": next_url} if next_url else {})}
            await writer.write(b'],"links":' + orjson.dumps(links) + b"}")

    async def _meta(self, request: ArticleRequest, now: datetime) -> dict[str, Any]:
        strategy, store = request.count_strategy, self.ctx.articles
        total = None if strategy == "none" else await store.count_articles(request.query, exact=strategy == "exact")
        return {"limit": request.query.limit, "offset": request.query.offset, "total": total,
                "total_estimated": strategy == "planned", "generated_at": iso(now),
                "feed_version": str(await store.data_version()), "source": self.ctx.stores.name,
                "filters": request.filters}


class ArticleHandler(BaseHandler):
    """One article in the single-read form; unknown, malformed or out-of-window ids are 404."""

    scope = SCOPE_ARTICLES

    async def get(self, article_id: str) -> None:
        try:  # ids are UUIDs (spec, Article): any case or form of one names the stored lower-case form
            canonical = str(uuid.UUID(article_id))
        except ValueError as exc:
            raise NotFoundError(f"no article with id {article_id!r}") from exc
        article = await self.ctx.articles.get_article(canonical)
        # The tier's article lookback holds here too (no way around the window).
        if not within_lookback(article.published_at, self.principal.tier.article_lookback_days, utcnow()):
            raise NotFoundError(f"no article with id {article_id!r} in the {self.principal.tier.name} window")
        self.write_json(single_form(article))


class SourcesHandler(BaseHandler):
    """The exact source names usable in the ``source`` filter, with type, tier and collection health."""

    scope = SCOPE_ARTICLES

    async def get(self) -> None:
        counted = {name: (kind, tier, n) for name, kind, tier, n in await self.ctx.articles.article_sources()}
        configured = {s.name: s for s in await self.ctx.sources.list_sources()}
        # Sources that only have articles (a removed feed, community submissions) are still filterable.
        for name, (kind, tier, _) in counted.items():
            configured.setdefault(name, Source(name, "", "", kind, tier, "community", enabled=False))
        rows = [_source_row(s, counted.get(s.name, ("", 0, 0))[2]) for s in sorted(configured.values(),
                                                                                  key=lambda s: s.name)]
        self.write_json({"meta": {"total": len(rows)}, "data": rows})


def _source_row(source: Source, article_count: int) -> dict[str, Any]:
    def when(value: datetime | None) -> str | None:
        return iso(value) if value else None

    return {"name": source.name, "source_type": source.source_type, "source_tier": source.source_tier,
            "category": source.category, "homepage": source.homepage, "feed_url": source.feed_url,
            "enabled": source.enabled, "article_count": article_count,
            "health": {"last_attempt_at": when(source.last_attempt_at), "last_success_at": when(source.last_success_at),
                       "last_error": source.last_error, "items_seen": source.items_seen,
                       "failed_articles": source.failed_articles}}


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [
        (r"/api/v1/articles", ArticleListHandler, {"ctx": ctx}),
        (r"/api/v1/articles/([^/]+)", ArticleHandler, {"ctx": ctx}),
        (r"/api/v1/sources", SourcesHandler, {"ctx": ctx}),
    ]


# --- OpenAPI description of the article endpoints (spec, GET /api/v1/articles) ---

_S = {"type": "string"}
_SL = {"type": "array", "items": _S}
_DT = DATE_TIME_PARAM
_FLAG = {"type": "boolean"}


def _schema(entry: ArticleFilter) -> dict[str, Any]:
    """The OpenAPI schema of a filter: its own, else derived from its kind, allowed values and default."""
    if entry.schema is not None:
        return dict(entry.schema)
    by_kind: dict[str, dict[str, Any]] = {
        "choice": {"type": "string", "enum": list(entry.values)}, "flag": _FLAG, "date-time": _DT,
        "number": {"type": "number", "minimum": entry.bounds[0], "maximum": entry.bounds[1]}}
    schema = dict(by_kind.get(entry.kind, _S))
    return schema if entry.default is None else {**schema, "default": entry.default}


def filter_params() -> list[dict[str, Any]]:
    """The OpenAPI parameters of store.article_filters, in table order."""
    out = []
    for entry in article_filters.ARTICLE_FILTERS:
        text = entry.description.format(lookback=per_tier("article_lookback_days", " days"))
        spec = csv_param(entry.name, text, entry.values or None) if entry.kind == "csv" else \
            param(entry.name, _schema(entry), text)
        out.append({**spec, "deprecated": True} if entry.deprecated else spec)
    return out


_PARAMS = [
    *filter_params(),
    limit_param(f"Page size; above the tier cap ({article_caps_sentence()}) it is reduced, X-Limit-Capped.", 50),
    param("offset", {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET, "default": 0},
          f"Rows to skip; above {MAX_OFFSET}: 400 deep_paging_unsupported. Not combinable with cursor."),
    param("cursor", _S, "Opaque signed cursor from links.next or X-Next-Cursor; tied to the sort (another sort or a "
          "modified cursor: 400 invalid_cursor). With a non-zero `offset`: 400 conflicting_parameters."),
    param("format", {"type": "string", "enum": list(FORMATS), "default": "json"},
          "ndjson and csv need scope read:articles:export (Pro) and cost more (X-Format-Cost-Multiplier)."),
    csv_param("fields", "Sparse rows: only these fields (id always kept; unknown names dropped)."),
    csv_param("expand", "Additions to each row: mitre (always on), iocs, cves, threat_actors.", EXPANSIONS),
    param("sort", {"type": "string", "enum": list(ARTICLE_SORTS), "default": "published:desc"},
          "Sort; ties broken by id."),
    param("count_strategy", {"type": "string", "enum": list(COUNT_STRATEGIES), "default": "none"},
          "meta.total: none (null), planned (a fast lower-bound estimate, at most 10,000), exact."),
]

_LIST_HEADERS = {
    "X-Next-Cursor": header("Cursor of the next page; absent on the last page"),
    **LOOKBACK_HEADER,
    "X-Tier-Lookback-Clamped": header("true when since was clamped", "boolean"),
    "X-Limit-Capped": header("true when limit exceeded the tier cap", "boolean"),
    **COST_HEADER,
    "Deprecation": header("Set when the deprecated cve parameter was used (RFC 9745)"),
    "Sunset": header("Removal date of the deprecated cve parameter (RFC 8594)"),
}

OPENAPI_SCHEMAS: dict[str, Any] = {
    "Article": {"type": "object", "description": "List form: every field top-level. CSV: arrays and objects are "
                "JSON in their cell, booleans true/false, absent values empty.", "required": ["id"], "properties": {
        **{n: _S for n in ("id", "title", "url", "canonical_url", "summary", "ai_summary", "source_name",
                           "source_type", "category", "category_label", "category_legacy", "content_type",
                           "severity_label", "categorized_by", "ai_classification", "submission_type")},
        # Spec: "string or null" / "number or null"; an article may have no image or classification time.
        **{n: {**_S, "nullable": True} for n in ("image_url", "audio_voice", "submitted_by_username",
                                                 "audio_url")},
        **{n: _DT for n in ("published_at", "fetched_at", "modified_at", "created_at")},
        "categorized_at": {**_DT, "nullable": True},
        **{n: {"type": "integer"} for n in ("source_tier", "ioc_count", "score", "upvotes", "downvotes",
                                            "comment_count", "vouch_count")},
        **{n: {"type": "number"} for n in ("severity_score", "ai_classification_confidence", "rank_score")},
        "audio_duration_seconds": {"type": "number", "nullable": True},
        **{n: _SL for n in ("tech_tags", "industry_tags", "threat_actors", "cve_ids")},
        "has_iocs": _FLAG, "is_archived": _FLAG,
        "mitre_techniques": {"type": "array", "items": {"type": "object", "properties": {
            "id": _S, "name": _S, "tactic": _S, "confidence": _S}}},
        "iocs": {"type": "array", "description": "expand=iocs", "items": {"type": "object", "properties": {
            "type": _S, "value": _S, "confidence": _S}}},
        "cves": {"type": "array", "description": "expand=cves", "items": {"type": "object", "properties": {
            "id": _S, "url": {"type": "string", "description": "NVD page"}}}},
        "threat_actor_details": {"type": "array", "description": "expand=threat_actors", "items": {
            "type": "object", "properties": {"name": _S, "techniques": _SL}}},
    }},
    "ArticleList": {"type": "object", "required": ["meta", "data", "links"], "properties": {
        "meta": {"type": "object", "properties": {
            "limit": {"type": "integer"}, "offset": {"type": "integer"}, "total": {"type": "integer", "nullable": True},
            "total_estimated": _FLAG, "generated_at": _DT, "feed_version": _S,
            "source": {"type": "string", "description": "the database that answered (sqlite or mongodb)"},
            "filters": {"type": "object", "description": "the applied filters; lists as lists"}}},
        "data": {"type": "array", "items": {"$ref": "#/components/schemas/Article"}},
        "links": {"type": "object", "properties": {"self": _S, "next": _S}},
    }},
    "ArticleSingle": {"type": "object", "properties": {
        "id": _S, "title": _S, "url": _S, "source": {"type": "string", "description": "publisher domain"},
        "published_at": _DT, "summary": _S, "categories": _SL, "severity": {"type": "string", "enum": list(
            SEVERITY_LABELS)}, "tags": _SL, "cves": _SL, "threat_actors": _SL, "points": {"type": "integer"},
        "comment_count": {"type": "integer"},
        "iocs": {"type": "array", "items": {"type": "object", "properties": {"type": _S, "value": _S}}},
        "mitre_techniques": {"type": "array", "items": {"type": "object", "properties": {"id": _S, "name": _S}}},
    }},
    "SourceList": {"type": "object", "properties": {"meta": {"type": "object"}, "data": {"type": "array", "items": {
        "type": "object", "properties": {
            "name": _S, "source_type": _S, "source_tier": {"type": "integer"}, "category": _S, "homepage": _S,
            "feed_url": _S, "enabled": _FLAG, "article_count": {"type": "integer"},
            "health": {"type": "object", "properties": {
                "last_attempt_at": {**_DT, "nullable": True}, "last_success_at": {**_DT, "nullable": True},
                "last_error": {"type": "string", "nullable": True}, "items_seen": {"type": "integer"},
                "failed_articles": {"type": "integer", "description": "articles skipped (page unreadable) or "
                                    "stored with an extractor's fields empty, over every run"}}}}}}}},
}

OPENAPI_PATHS: dict[str, Any] = {
    "/api/v1/articles": operation(
        "articles", "List, filter, search, poll and export articles",
        "Scope read:articles (json) or read:articles:export (ndjson, csv; Pro). Streamed in chunks. CSV columns: "
        + ", ".join(CSV_COLUMNS) + ". Delta polling: time_field=modified_at, modified_since, sort=modified:desc.",
        _PARAMS,
        {"200": ok("A page of articles", {"application/json": {"$ref": "#/components/schemas/ArticleList"},
                                          "application/x-ndjson": {"type": "string"}, "text/csv": {"type": "string"}},
                   _LIST_HEADERS),
         "400": bad_request(
             "conflicting_parameters (severity with min_severity, time_field other than modified_at with "
             "modified_since, cursor with a non-zero offset), q_invalid, invalid_cursor, "
             "deep_paging_unsupported, or a value the schema admits but the parameter's description refuses "
             "(an until in the future)", {**LOOKBACK_HEADER, **COST_HEADER})}, basic=True),
    "/api/v1/articles/{id}": operation(
        "articles", "Read one article", "Scope read:articles. Single-read form. The id is a UUID in any letter case "
        "(read as its lower-case form). Unknown, malformed or outside the tier's lookback: 404 not_found.",
        [param("id", {"type": "string", "format": "uuid"}, "Article id.", where="path")],
        {"200": ok("The article", {"application/json": {"$ref": "#/components/schemas/ArticleSingle"}}),
         "404": {"$ref": "#/components/responses/NotFound"}}),
    "/api/v1/sources": operation(
        "articles", "List sources", "Scope read:articles. Exact names for the source filter, with type, tier, "
        "article count and collection health.", [],
        {"200": ok("Sources", {"application/json": {"$ref": "#/components/schemas/SourceList"}})}),
}
