"""Saved feeds: ``/api/v1/feeds`` (scope ``feeds``) and each feed's IOC list and exports.

A feed is a named set of IOC filters owned by the account. Every route names the feed by id and looks it
up among the caller's account's feeds only, so another account's feed is a 404 like one that never
existed. Reading a feed costs what the read costs elsewhere: ``/iocs`` is the IOC list (scope
``read:iocs``, every tier) and ``/export/{format}`` the format's export (its scope, Pro only), each with
the feed's filters in place of the list's filter parameters.
"""

from __future__ import annotations

from typing import Any

import orjson

from config.tiers import SCOPE_FEEDS, SCOPE_IOCS
from exporters.registry import EXPORTERS
from server.base import BaseHandler, public_base
from server.context import AppContext
from server.errors import BadRequest, NotFoundError
from server.exports import ExportFormatHandler, answer_export, export_request
from server.feed_docs import OPENAPI_PATHS as OPENAPI_PATHS
from server.feed_docs import OPENAPI_SCHEMAS as OPENAPI_SCHEMAS
from server.feed_params import create_feed as create
from server.feed_params import feed_resource, parse_filters, parse_name, valid_id
from server.feed_params import update_feed as update
from server.ioc_params import parse_ioc_request
from server.iocs import write_ioc_list
from store.query import IocFilters
from store.records import Feed, utcnow

MAX_BODY = 64 * 1024


class FeedHandlerBase(BaseHandler):
    """What every feed route shares: the caller's own feeds, and a JSON object body."""

    scope = SCOPE_FEEDS

    async def own_feed(self, feed_id: str) -> Feed:
        """The caller's feed ``feed_id``, else 404 (an unknown id and another account's feed alike)."""
        found = (
            await self.ctx.stores.feeds.get_feed(self.principal.user.id, feed_id.lower()) if valid_id(feed_id) else None
        )
        if found is None:
            raise NotFoundError(f"you have no feed {feed_id!r}", details={"feed_id": feed_id})
        return found

    def json_body(self) -> dict[str, Any]:
        body = self.request.body
        if len(body) > MAX_BODY:
            raise BadRequest(f"the body is larger than {MAX_BODY:,} bytes", code="invalid_body")
        try:
            value = orjson.loads(body or b"{}")
        except orjson.JSONDecodeError as exc:
            raise BadRequest("the body is not JSON", code="invalid_body") from exc
        if not isinstance(value, dict):
            raise BadRequest("the body must be a JSON object", code="invalid_body")
        return value

    def write_feed(self, feed: Feed, status: int = 200) -> None:
        self.write_json(feed_resource(feed, self.principal.tier, public_base(self.ctx.settings)), status)


class FeedsHandler(FeedHandlerBase):
    """``GET``: the account's feeds; ``POST``: a new feed (``{"name", "filters"}``), 201."""

    async def get(self) -> None:
        feeds = await self.ctx.stores.feeds.list_feeds(self.principal.user.id)
        tier, base = self.principal.tier, public_base(self.ctx.settings)
        self.write_json(
            {
                "data": [feed_resource(f, tier, base) for f in feeds],
                "meta": {"total": len(feeds), "limit": tier.max_feeds},
            }
        )

    async def post(self) -> None:
        body = self.json_body()
        name, filters = parse_name(body.get("name")), parse_filters(body.get("filters", {}))
        feed = await create(self.ctx.stores.feeds, self.principal.user, name, filters, self.ctx.settings.upgrade_url)
        self.set_header("Location", f"/api/v1/feeds/{feed.id}")
        self.write_feed(feed, 201)


class FeedHandler(FeedHandlerBase):
    """``GET`` one feed; ``PATCH`` its name and/or filters (given filters replace the old ones); ``DELETE``."""

    async def get(self, feed_id: str) -> None:
        self.write_feed(await self.own_feed(feed_id))

    async def patch(self, feed_id: str) -> None:
        feed, body = await self.own_feed(feed_id), self.json_body()
        name = parse_name(body["name"]) if "name" in body else None
        filters = parse_filters(body["filters"]) if "filters" in body else None
        self.write_feed(await update(self.ctx.stores.feeds, feed, name, filters))

    async def delete(self, feed_id: str) -> None:
        feed = await self.own_feed(feed_id)
        await self.ctx.stores.feeds.delete_feed(feed.user_id, feed.id)
        self.set_status(204)
        self.finish()


class FeedIocsHandler(FeedHandlerBase):
    """``GET /api/v1/feeds/{id}/iocs``: the IOC list with the feed's filters; paging and lookback as /iocs."""

    scope = SCOPE_IOCS

    async def get(self, feed_id: str) -> None:
        filters = IocFilters.from_params((await self.own_feed(feed_id)).filters)
        request = parse_ioc_request(self.params, self.principal.tier, utcnow(), filters=filters,
                                    secret=self.ctx.settings.secret_key)
        await write_ioc_list(self, request)


class FeedExportHandler(ExportFormatHandler, FeedHandlerBase):
    """``GET /api/v1/feeds/{id}/export/{format}``: the format's export of the feed's filters (Pro), from
    the cache like the standard exports (the precompute job builds every feed's default export)."""

    async def get(self, feed_id: str) -> None:
        filters = IocFilters.from_params((await self.own_feed(feed_id)).filters)
        await answer_export(self, *export_request(self.params, self.principal.tier, self.fmt, saved=filters))


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    args = {"ctx": ctx}
    return [
        (r"/api/v1/feeds", FeedsHandler, args),
        (r"/api/v1/feeds/([^/]+)", FeedHandler, args),
        (r"/api/v1/feeds/([^/]+)/iocs", FeedIocsHandler, args),
        *((rf"/api/v1/feeds/([^/]+)/export/{fmt}", FeedExportHandler, {**args, "fmt": fmt}) for fmt in EXPORTERS),
    ]
