"""GET /api/v1/articles, /api/v1/articles/{id} and /api/v1/sources (spec, Endpoints; issue 4).

A JSON page (at most 1,000 rows) is read with one query for ``limit + 1`` rows: the extra row says
whether a next page exists. An NDJSON/CSV export (up to 5,000 rows) is streamed instead: its end is
found first by a two-row peek at the page's last position, so ``X-Next-Cursor`` leaves with the
headers, and rows are then streamed up to that position (not merely ``limit`` rows), so an article
inserted during the request is never skipped by the next page. Either way cursor walks return every
row exactly once.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import orjson

from config.tiers import SCOPE_ARTICLES, SCOPE_ARTICLES_EXPORT, format_cost
from exporters.articles import CSV_COLUMNS, csv_header, csv_line, list_row, single_form, sparse
from server.article_params import ArticleRequest, cursor_kind, encode_position, parse_article_request
from server.articles_doc import OPENAPI_PATHS, OPENAPI_SCHEMAS
from server.base import BaseHandler
from server.context import AppContext
from server.errors import NotFoundError
from server.streaming import ChunkWriter, ClientGone
from server.tokens import sign
from store.base import Position
from store.query import ArticleQuery
from store.records import Source, iso, utcnow

__all__ = ["OPENAPI_PATHS", "OPENAPI_SCHEMAS", "routes"]
MEDIA = {"json": "application/json; charset=utf-8", "ndjson": "application/x-ndjson",
         "csv": "text/csv; charset=utf-8"}
# A page streamed up to its peeked end may grow by the rows inserted meanwhile; this bounds it.
INSERT_SLACK = 1000


Payload = bytes | dict[str, Any]  # a pre-encoded list-form row, or a row to encode (CSV, fields, expand)
Row = tuple[Position, Payload]


async def _iterate(rows: list[Row]) -> AsyncIterator[Row]:
    for row in rows:
        yield row


def _as_stored(request: ArticleRequest) -> bool:
    """Plain JSON and NDJSON rows stream the store's encoding of the list form as it is."""
    return request.fmt != "csv" and not request.fields


def _encode(payload: Payload) -> bytes:
    return payload if isinstance(payload, bytes) else orjson.dumps(payload)


class ArticleListHandler(BaseHandler):
    """List, filter, full-text search, delta polling and bulk export in one endpoint."""

    def format_id(self) -> str:
        fmt = self.params.text("format", "json", MEDIA) or "json"
        return fmt

    def required_scope(self) -> str | None:
        return SCOPE_ARTICLES if self.format_id() == "json" else SCOPE_ARTICLES_EXPORT

    async def get(self) -> None:
        now = utcnow()
        request = parse_article_request(self.params, self.principal.tier, now, self.ctx.settings.secret_key)
        for name, value in request.headers.items():
            self.set_header(name, value)
        self.set_header("X-Format-Cost-Multiplier", str(format_cost(request.fmt)))
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

    async def _batches(self, request: ArticleRequest, query: ArticleQuery) -> AsyncIterator[Sequence[Row]]:
        if not request.expand:  # the stored list form serves every request without expansions
            async for rows in self.ctx.store.iter_article_rows(query):
                yield rows if _as_stored(request) else [(p, sparse(orjson.loads(b), request.fields)) for p, b in rows]
            return
        field = query.sort_field
        async for batch in self.ctx.store.iter_articles(query):
            yield [((getattr(a, field), a.id), sparse(list_row(a, request.expand), request.fields)) for a in batch]

    async def _plan(self, request: ArticleRequest) -> tuple[AsyncIterator[Row], Position | None]:
        """The page's rows and, when another page follows, its last position (the next cursor)."""
        q = request.query
        if request.fmt == "json":  # at most 1,000 rows: one query reads the page and the row after it
            rows = [row async for batch in self._batches(request, replace(q, limit=q.limit + 1)) for row in batch]
            return _iterate(rows[:q.limit]), (rows[q.limit - 1][0] if len(rows) > q.limit else None)
        end = await self._page_end(request)
        return self._rows(request, end), end

    async def _page_end(self, request: ArticleRequest) -> Position | None:
        """The page's last position when another row follows it (a two-row peek), else None."""
        q = request.query
        peek = replace(q, offset=q.offset + q.limit - 1, limit=2)
        rows = [row async for batch in self.ctx.store.iter_article_rows(peek) for row in batch]
        return rows[0][0] if len(rows) == 2 else None

    def _next(self, request: ArticleRequest, end: Position) -> str:
        value, last_id = end
        token = sign(self.ctx.settings.secret_key, cursor_kind(request.query.sort),
                     {"v": encode_position(value), "id": last_id})
        self.set_header("X-Next-Cursor", token)
        return self._url(drop=("cursor", "offset"), add=[("cursor", token)])

    def _url(self, drop: tuple[str, ...] = (), add: list[tuple[str, str]] | None = None) -> str:
        """This request's full URL, never with the ``api_key`` parameter: a key is never echoed."""
        args = [(k, value.decode("utf-8", "replace")) for k, values in self.request.query_arguments.items()
                if k not in (*drop, "api_key") for value in values]
        query = urlencode([*args, *(add or [])])
        return f"{self.request.protocol}://{self.request.host}{self.request.path}" + (f"?{query}" if query else "")

    async def _rows(self, request: ArticleRequest, end: Position | None) -> AsyncIterator[Row]:
        """Rows of the page: up to the peeked end when there is a next page, else up to ``limit``."""
        q = request.query
        query = q if end is None else replace(q, limit=q.limit + INSERT_SLACK)
        async for batch in self._batches(request, query):
            for row in batch:
                yield row
                if row[0] == end:
                    return

    async def _stream(self, writer: ChunkWriter, request: ArticleRequest, rows: AsyncIterator[Row],
                      now: datetime, next_url: str | None) -> None:
        if request.fmt == "ndjson":
            async for _, payload in rows:
                await writer.write(_encode(payload) + b"\n")
        elif request.fmt == "csv":
            columns = tuple(c for c in CSV_COLUMNS if not request.fields or c == "id" or c in request.fields)
            await writer.write(csv_header(columns))
            async for _, payload in rows:
                assert isinstance(payload, dict), "CSV rows are always decoded (_as_stored)"
                await writer.write(csv_line(payload, columns))
        else:
            await writer.write(b'{"meta":' + orjson.dumps(await self._meta(request, now)) + b',"data":[')
            separator = b""
            async for _, payload in rows:
                await writer.write(separator + _encode(payload))
                separator = b","
            links = {"self": self._url(), **({"next": next_url} if next_url else {})}
            await writer.write(b'],"links":' + orjson.dumps(links) + b"}")

    async def _meta(self, request: ArticleRequest, now: datetime) -> dict[str, Any]:
        strategy, store = request.count_strategy, self.ctx.store
        total = None if strategy == "none" else await store.count_articles(request.query, exact=strategy == "exact")
        return {"limit": request.query.limit, "offset": request.query.offset, "total": total,
                "total_estimated": strategy == "planned", "generated_at": iso(now),
                "feed_version": str(await store.data_version()), "source": store.name,
                "filters": request.filters}


class ArticleHandler(BaseHandler):
    """One article in the single-read form; unknown, malformed or out-of-window ids are 404."""

    scope = SCOPE_ARTICLES

    async def get(self, article_id: str) -> None:
        try:
            uuid.UUID(article_id)
        except ValueError as exc:
            raise NotFoundError(f"no article with id {article_id!r}") from exc
        article = await self.ctx.store.get_article(article_id)
        # The tier's article lookback holds here too (issue 4: no way around the window).
        if article.published_at < utcnow() - timedelta(days=self.principal.tier.article_lookback_days):
            raise NotFoundError(f"no article with id {article_id!r} in the {self.principal.tier.name} window")
        self.write_json(single_form(article))


class SourcesHandler(BaseHandler):
    """The exact source names usable in the ``source`` filter, with type, tier and collection health."""

    scope = SCOPE_ARTICLES

    async def get(self) -> None:
        counted = {name: (kind, tier, n) for name, kind, tier, n in await self.ctx.store.article_sources()}
        configured = {s.name: s for s in await self.ctx.store.list_sources()}
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
                       "last_error": source.last_error, "items_seen": source.items_seen}}


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [
        (r"/api/v1/articles", ArticleListHandler, {"ctx": ctx}),
        (r"/api/v1/articles/([^/]+)", ArticleHandler, {"ctx": ctx}),
        (r"/api/v1/sources", SourcesHandler, {"ctx": ctx}),
    ]

