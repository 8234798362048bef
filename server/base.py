"""BaseHandler: request id, authentication, tier and scope checks, rate limiting, one error renderer.

Every error, Tornado's own 404 and 405 included, goes through ``write_error`` (tornado guide,
"Error Handling"), which renders the spec's envelope and never a stack trace.
"""

from __future__ import annotations

import itertools
import logging
import os
import secrets
from datetime import datetime, timedelta
from typing import Any, ClassVar

import orjson
from tornado.httputil import HTTPServerRequest
from tornado.web import HTTPError, RequestHandler

from config.settings import Settings
from config.tiers import TIERS, Tier
from exporters.registry import format_cost
from server.context import AppContext
from server.errors import (
    CODE_BY_STATUS,
    ApiError,
    AuthError,
    BadRequest,
    HeadersTooLarge,
    NotFoundError,
    RateLimited,
    ScopeError,
    Unavailable,
    UriTooLong,
)
from server.params import Params
from store.apikeys import hash_key, looks_like_key, matches, works
from store.base import NotFound, StoreUnavailable
from store.records import ApiKey, User, utcnow
from telemetry import metrics

log = logging.getLogger("ctiwire.server")

# How stale a key's ``last_used_at`` may get before a request records it again.
LAST_USED_PRECISION = timedelta(minutes=1)


class Principal:
    """The authenticated caller of one request."""

    __slots__ = ("key", "user", "tier")

    def __init__(self, key: ApiKey, user: User) -> None:
        self.key = key
        self.user = user
        self.tier: Tier = TIERS[user.tier]


def public_base(settings: Settings) -> str:
    """The scheme and host of the links the API writes (``links.self``, ``links.next``): CTIWIRE_PUBLIC_URL,
    else the listening address; never the client's ``Host`` header, which anyone can set."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    return f"http://{settings.host}:{settings.port}"


# The service's request limits, enforced with the error envelope; Tornado's own are set higher
# (application.http) so that these are the ones a client meets.
MAX_REQUEST_LINE = 64 * 1024
MAX_HEADER_BYTES = 64 * 1024
MAX_QUERY_FIELDS = 1000


def request_limit_error(request: HTTPServerRequest) -> ApiError | None:
    """The error for a request over the service's limits, or None."""
    if len(request.uri or "") > MAX_REQUEST_LINE:
        return UriTooLong(f"the request line is longer than {MAX_REQUEST_LINE:,} bytes")
    if sum(len(k) + len(v) + 4 for k, v in request.headers.get_all()) > MAX_HEADER_BYTES:
        return HeadersTooLarge(f"the request headers are larger than {MAX_HEADER_BYTES:,} bytes")
    fields = sum(len(values) for values in request.query_arguments.values())
    if fields > MAX_QUERY_FIELDS:
        return BadRequest(f"the query has {fields:,} fields; at most {MAX_QUERY_FIELDS:,} are accepted",
                          code="too_many_parameters", details={"max_fields": MAX_QUERY_FIELDS})
    return None


class _RequestIds:
    """A random per-process prefix and a counter: unique across processes and restarts without asking
    the kernel for randomness on every request (request ids correlate logs; they guard nothing). A
    forked server process (CTIWIRE_PROCESSES) draws its own prefix."""

    def __init__(self) -> None:
        self.reseed()
        os.register_at_fork(after_in_child=self.reseed)

    def reseed(self) -> None:
        self.prefix = "req_" + secrets.token_hex(6)
        self.numbers = itertools.count(1)

    def next(self) -> str:
        return f"{self.prefix}{next(self.numbers) & 0xFFFFFFFFFFFF:012x}"


_request_ids = _RequestIds()


def new_request_id() -> str:
    return _request_ids.next()


class BaseHandler(RequestHandler):
    """Base of every handler. Subclasses set ``scope`` (and override ``plan_allows`` for an endpoint the
    spec's Endpoints table keeps to some tiers), or ``public`` for no key."""

    public: ClassVar[bool] = False
    scope: ClassVar[str | None] = None
    ctx: AppContext
    principal: Principal

    def initialize(self, ctx: AppContext) -> None:
        self.ctx = ctx
        # The ETag of a body kept and served many times (store.cache.body_etag), set by its handler.
        self.known_etag: str | None = None
        self.params = Params(self.request.query_arguments)
        self._limit_headers: dict[str, int] = {}

    def set_default_headers(self) -> None:
        # Called again by send_error's clear(): the request id survives an error.
        if not hasattr(self, "request_id"):
            self.request_id = new_request_id()
        # Keyed answers must not sit in shared or browser caches (cached exports revalidate
        # instead: server.cached_responses), and no answer is content-sniffed. Constant, safe values go
        # straight into the headers: set_header would check each with a regular expression on every request.
        headers = self._headers
        headers["X-Request-Id"] = self.request_id
        headers["Server"] = "ctiwire"
        headers["Cache-Control"] = "no-store"
        headers["X-Content-Type-Options"] = "nosniff"
        self._set_limit_headers()

    def _set_limit_headers(self) -> None:
        for name, value in getattr(self, "_limit_headers", {}).items():
            self._headers[name] = str(value)  # an int's digits need no header-safety check

    # -- the request pipeline ----------------------------------------------------------------
    async def prepare(self) -> None:
        too_large = request_limit_error(self.request)
        if too_large is not None:
            raise too_large
        self._refuse_unimplemented_method()
        if self.public:
            return
        self.principal = await self.authenticate()
        # A request refused before any work (403 here; 400 and 404 in the handler) costs one unit;
        # the rest of its format's multiplier is charged once it is valid (charge_format).
        await self.charge(self.principal, 1)
        self.check_access(self.principal)

    async def charge_format(self) -> None:
        """The rest of the format's rate-limit multiplier (spec, Limits 6), once the request is valid."""
        rest = format_cost(self.format_id()) - 1
        if rest > 0:
            await self.charge(self.principal, rest)

    def _refuse_unimplemented_method(self) -> None:
        """405 before authentication: a wrong method is wrong whoever asks."""
        method = self.request.method.lower() if self.request.method else ""
        if getattr(type(self), method, None) is getattr(RequestHandler, method, None):
            raise HTTPError(405)

    def allowed_methods(self) -> list[str]:
        """The methods this handler serves (HEAD is not served, so Allow does not offer it)."""
        return [m for m in ("GET", "POST", "PATCH", "DELETE")
                if getattr(type(self), m.lower()) is not getattr(RequestHandler, m.lower())]

    def format_id(self) -> str:
        """The response format, for the rate-limit cost (spec, Limits 6)."""
        return "json"

    def required_scope(self) -> str | None:
        return self.scope

    def plan_allows(self, tier: Tier) -> bool:
        """Whether ``tier`` may call this endpoint at all, whatever its key's scopes."""
        return True

    def raw_key(self) -> str | None:
        """The key from ``Authorization: Bearer``, ``X-API-Key`` or ``api_key`` (spec, Authentication 2-3)."""
        auth = self.request.headers.get("Authorization", "")
        if auth[:7].lower() == "bearer " and auth[7:].strip():
            return auth[7:].strip()
        return self.request.headers.get("X-API-Key", "").strip() or self.params.raw("api_key")

    async def authenticate(self) -> Principal:
        raw = self.raw_key()
        if not raw:
            raise AuthError("an API key is required: send 'Authorization: Bearer <API_KEY>'", code="missing_api_key")
        digest = hash_key(raw)
        found = await self.ctx.accounts.key_with_user(digest) if looks_like_key(raw) else None
        if found is None or not matches(found[0], digest):
            if looks_like_key(raw) and await self.ctx.accounts.is_revoked(digest):
                raise AuthError("this API key was deleted", code="expired_api_key")
            raise AuthError("the API key matches no active key", code="invalid_api_key")
        key, user = found
        now = utcnow()
        if not works(key, digest, now):  # a rotated key's former secret, too, once its grace is over
            raise AuthError("this API key is deactivated or expired", code="expired_api_key")
        if key.last_used_at is None or now - key.last_used_at >= LAST_USED_PRECISION:
            await self._note_use(key, now)
        return Principal(key, user)

    async def _note_use(self, key: ApiKey, now: datetime) -> None:
        """Keep ``last_used_at`` to the minute (authenticate calls this once a minute per key, not once a
        request); a failed write (a full disk, a store outage) never fails the read it came with."""
        try:
            await self.ctx.accounts.touch_key(key.id, now)
        except StoreUnavailable as exc:
            log.warning("could not record the use of a key: %s", exc)

    async def charge(self, principal: Principal, cost: int) -> None:
        limiter = self.ctx.limiter
        verdict = (limiter.charge_now(principal.key.id, principal.tier, cost)
                   or await limiter.charge(principal.key.id, principal.tier, cost))
        self._limit_headers = {
            "X-RateLimit-Limit": verdict.limit,
            "X-RateLimit-Remaining": verdict.remaining,
            "X-RateLimit-Reset": verdict.reset,
        }
        self._set_limit_headers()  # and set_default_headers sets them again after an error's clear()
        if not verdict.allowed:
            retry = max(verdict.reset - int(utcnow().timestamp()), 1)
            metrics().refusals.labels(principal.tier.name).inc()
            raise RateLimited(
                f"rate limit of {verdict.exceeded_limit} requests per {verdict.exceeded} exceeded",
                details={"limit": verdict.exceeded_limit, "window": verdict.exceeded,
                         "reset_at": datetime.fromtimestamp(verdict.reset, utcnow().tzinfo).isoformat(),
                         "tier": principal.tier.name, "upgrade_url": self.ctx.settings.upgrade_url},
                headers={"Retry-After": str(retry)},
            )

    def check_access(self, principal: Principal) -> None:
        """Pro-only routes and scopes answer ``insufficient_scope`` with the spec's details."""
        required = self.required_scope()
        if required is None:
            return
        allowed = self.plan_allows(principal.tier)
        if required in principal.key.scopes and allowed:
            return
        plans = " or ".join(tier.name.capitalize() for tier in TIERS.values() if self.plan_allows(tier))
        plan = "" if allowed else f"the {plans} plan and "
        raise ScopeError(
            f"this request needs {plan}scope {required!r}",
            details={"required_scope": required, "your_scopes": list(principal.key.scopes),
                     "tier": principal.tier.name, "upgrade_url": self.ctx.settings.upgrade_url},
        )

    # -- output ------------------------------------------------------------------------------
    def compute_etag(self) -> str | None:
        return self.known_etag or super().compute_etag()

    def check_etag_header(self) -> bool:
        # Tornado looks If-None-Match up with Mapping.get, which raises and catches KeyError when the
        # header is absent, as on most requests; a membership test costs a fraction of that.
        return "If-None-Match" in self.request.headers and super().check_etag_header()

    def write_json(self, payload: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(orjson.dumps(payload))

    def render_error(self, status: int, code: str, message: str, details: dict[str, Any] | None) -> None:
        """The spec's error envelope; TAXII handlers override this with the TAXII error resource."""
        error: dict[str, Any] = {"code": code, "message": message}
        if details:
            error["details"] = details
        error["request_id"] = self.request_id
        self.write_json({"error": error}, status)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        exc = _translate(exc)
        if isinstance(exc, ApiError):
            for name, value in exc.headers.items():
                self.set_header(name, value)
            self.render_error(exc.status, exc.code, exc.message, exc.details)
            return
        if status_code == 405:
            self.set_header("Allow", ", ".join(self.allowed_methods()))
        code = CODE_BY_STATUS.get(status_code, "internal_error")
        message = self._reason if status_code < 500 else "internal error; quote the request id when reporting it"
        self.render_error(status_code, code, message, None)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(_translate(value), ApiError) or isinstance(value, HTTPError):
            return  # an answered client error, not a fault: the access log has it
        log.error("unhandled error in %s %s (%s)", self.request.method, self.request.path, self.request_id,
                  exc_info=(typ, value, tb))


def _translate(exc: BaseException | None) -> BaseException | None:
    """Map store errors onto API errors so handlers can let them propagate."""
    if isinstance(exc, StoreUnavailable):
        metrics().backend_errors.labels("store").inc()
        return Unavailable("a backing service is unavailable; retry shortly")
    if isinstance(exc, NotFound):
        return NotFoundError(str(exc))
    return exc


class NotFoundHandler(BaseHandler):
    """Every unknown path: the envelope's 404."""

    public = True

    async def prepare(self) -> None:
        raise request_limit_error(self.request) or HTTPError(404)
