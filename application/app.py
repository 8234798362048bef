"""Application assembly: build the context from settings and mount every route module.

This is the one place that sees every HTTP room: the /api/v1 handlers of ``server``, the TAXII 2.1
server of ``taxii`` and the account web of ``web`` (both build on the server's plumbing). It sits above
them, so every import here is static and the import-linter layers (pyproject.toml) check it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from types import ModuleType
from typing import Any

from tornado.routing import PathMatches, Rule
from tornado.web import Application, RequestHandler

from config.settings import Settings
from server import allowlist, articles, exports, feeds, health, iocs, lookup, openapi, sightings, stream, webhooks
from server import metrics as metrics_route
from server.base import NotFoundHandler
from server.context import AppContext
from server.ratelimit import RateLimiter, make_counters
from store.apikeys import KEY_PREFIX
from store.factory import make_cache, make_stores
from store.ports import Stores
from taxii import routes as taxii_routes
from telemetry import Metrics, metrics
from web import routes as web_routes
from web.base import secure_cookies

access_log = logging.getLogger("ctiwire.access")

# Each route module offers ``routes(ctx)`` and ``OPENAPI_PATHS`` (and may offer ``OPENAPI_SCHEMAS``).
ROUTE_MODULES: tuple[ModuleType, ...] = (health, articles, iocs, lookup, sightings, exports, feeds, allowlist, stream,
                                         webhooks, metrics_route, taxii_routes)
# Tornado tries rules in order, one regular expression each (a TAXII page went through 21):
# modules under one path prefix are nested under one rule for it, so a request tests each prefix once.
_PREFIXES: dict[ModuleType, str] = {articles: "/api/v1/", iocs: "/api/v1/", lookup: "/api/v1/", exports: "/api/v1/",
                                    sightings: "/api/v1/", feeds: "/api/v1/", allowlist: "/api/v1/", stream: "/api/v1/",
                                    webhooks: "/api/v1/",
                                    taxii_routes: "/(?:api/)?taxii2"}


def openapi_document() -> dict[str, Any]:
    """The full description (also used by tests without a running server)."""
    return openapi.build_document([m.OPENAPI_PATHS for m in ROUTE_MODULES] + [openapi.OPENAPI_PATHS],
                                  [getattr(m, "OPENAPI_SCHEMAS", {}) for m in ROUTE_MODULES])


def _log_request(handler: RequestHandler) -> None:
    """Access log without the query string (it may carry the discouraged ``api_key`` parameter): status,
    method, path, duration, request id, client address and the four characters of the key's display prefix
    after ``sk_live_`` (``key=Ab3x``: enough to tell a user's keys apart, never the key, and nothing the
    redacting filter of ``application.logs`` would have to hide)."""
    request, status, took = handler.request, handler.get_status(), handler.request.request_time()
    count, latency = _request_metrics(metrics(), type(handler).__name__, request.method or "-", status)
    count.inc()
    latency.observe(took)
    if not access_log.isEnabledFor(logging.INFO):
        return
    principal = getattr(handler, "principal", None)
    fields = {"request_id": getattr(handler, "request_id", "-"), "method": request.method, "path": request.path,
              "status": status, "duration_ms": round(1000.0 * took, 1), "client": request.remote_ip,
              "key": principal.key.prefix.removeprefix(KEY_PREFIX).rstrip("…") if principal is not None else None,
              "user_id": principal.user.id if principal is not None else None}
    access_log.info("%d %s %s %.1fms %s client=%s key=%s", status, fields["method"], fields["path"],
                    fields["duration_ms"], fields["request_id"], fields["client"], fields["key"] or "-", extra=fields)


@functools.lru_cache(maxsize=1024)
def _request_metrics(registry: Metrics, route: str, method: str, status: int) -> tuple[Any, Any]:
    """The labelled children of one route, method and status (bounded labels: the handler class, never the
    raw path), looked up once: ``labels()`` takes a lock and builds a key on every call."""
    return registry.requests.labels(route, method, str(status)), registry.latency.labels(route)


def make_app(ctx: AppContext) -> Application:
    """The Tornado application for ``ctx`` with every route module mounted."""
    handlers = _mounted(ctx)
    handlers.extend(openapi.routes(ctx, openapi_document()))
    handlers.extend(web_routes.routes(ctx))  # the account web: pages, not part of the API's description
    return Application(
        handlers,
        default_handler_class=NotFoundHandler,
        default_handler_args={"ctx": ctx},
        log_function=_log_request,
        compress_response=False,
        # Signs the account web's flash cookie; sessions are opaque ids whose hashes live in the store.
        cookie_secret=ctx.settings.secret_key,
        xsrf_cookie_kwargs={"httponly": True, "samesite": "Lax", "secure": secure_cookies(ctx)},
    )


def _mounted(ctx: AppContext) -> list[Any]:
    """Every route module's rules in order; modules sharing a prefix nest under one rule (a rule whose
    target is a list of rules: Tornado's ``_ApplicationRouter``). A path under a prefix that no nested rule
    matches goes on to the next rules and, at the end, to the 404 handler, as it did without nesting."""
    rules: list[Any] = []
    nested: dict[str, list[Any]] = {}
    for module in ROUTE_MODULES:
        prefix = _PREFIXES.get(module)
        if prefix is None:
            rules.extend(module.routes(ctx))
            continue
        if prefix not in nested:
            nested[prefix] = []
            rules.append(Rule(PathMatches(prefix + ".*"), nested[prefix]))
        nested[prefix].extend(module.routes(ctx))
    return rules


async def build_context(settings: Settings, stores: Stores | None = None) -> AppContext:
    """Open the stores (``stores``, else the ones chosen by configuration) and the cache; create indexes."""
    stores = stores or make_stores(settings)
    await stores.open()
    ctx = AppContext(settings=settings, stores=stores, cache=make_cache(settings),
                     limiter=RateLimiter(make_counters(settings.redis_url), settings.rate_limit_scale))
    flushing = ctx.limiter.tally.flush_every(stores.accounts, settings.usage_flush_seconds)
    ctx.extras["usage_flush"] = asyncio.create_task(flushing)
    return ctx


async def close_context(ctx: AppContext) -> None:
    flushing = ctx.extras.pop("usage_flush", None)
    if flushing is not None:  # its last flush needs the store open
        flushing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await flushing
    await stream.close_hub(ctx)
    await ctx.cache.close()
    await ctx.limiter.counters.close()
    await ctx.stores.close()
