"""``/api/v1/webhooks`` (scope ``webhooks``, Pro): the live feed pushed to a URL in signed batches.

A webhook takes a URL and the stream's filters (``server.stream_params``: one parser, one matcher). Its
signing secret is in the creation's answer only; reads never show it again. Another account's webhook is
a 404 like one that never existed (the store names the owner in every read).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from config.tiers import SCOPE_WEBHOOKS, Tier
from server.bodies import JsonBodyHandler
from server.context import AppContext
from server.errors import BadRequest, NotFoundError, QuotaError, bad_param
from server.feed_params import joined
from server.params import Params
from server.stream_params import KNOWN_PARAMETERS, parse_stream_filter
from server.webhook_docs import OPENAPI_PATHS as OPENAPI_PATHS
from server.webhook_docs import OPENAPI_SCHEMAS as OPENAPI_SCHEMAS
from store.base import QuotaExceeded
from store.event_filter import StreamFilter
from store.ports.webhooks import Webhook
from store.records import utcnow
from webhooks.delivery import Policy
from webhooks.guard import UnsafeUrl
from webhooks.service import NewWebhook, create_webhook, delivery_resource, resource, set_paused

# ``feed`` names a saved feed read when a stream opens; a webhook keeps its filters as given, so it has none.
FILTERS = tuple(sorted(KNOWN_PARAMETERS - {"api_key", "last_event_id", "duration", "feed"}))
RECENT_DELIVERIES = 20


def parse_webhook_filters(value: Any, tier: Tier) -> tuple[dict[str, list[str]], StreamFilter]:
    """``{parameter: [values] | "a,b"}`` of the stream's filters -> (the lists as given, the parsed filter)."""
    if not isinstance(value, Mapping):
        raise bad_param("filters", f"must be an object of the stream's filters ({', '.join(FILTERS)})")
    unknown = [name for name in value if name not in FILTERS]
    if unknown:
        raise bad_param(f"filters.{unknown[0]}", f"is not a filter; known: {', '.join(FILTERS)}")
    given = {name: joined(name, v) for name, v in value.items() if v not in ("", [], None)}
    args = {name: [text.encode()] for name, text in given.items()}
    try:
        flt = parse_stream_filter(Params(args), args, tier, utcnow())
    except BadRequest as exc:
        name = (exc.details or {}).get("parameter", "")
        raise bad_param(f"filters.{name}", exc.message.partition(": ")[2] or exc.message) from exc
    return {name: text.split(",") for name, text in given.items()}, flt


def parse_url(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise bad_param("url", "must be the http(s) URL to POST events to")
    return value.strip()


class WebhookHandlerBase(JsonBodyHandler):
    scope = SCOPE_WEBHOOKS
    max_body: ClassVar[int] = 64 * 1024

    def plan_allows(self, tier: Tier) -> bool:
        return tier.max_webhooks > 0

    async def own(self, hook_id: str) -> Webhook:
        found = await self.ctx.stores.webhooks.get_webhook(self.principal.user.id, hook_id)
        if found is None:
            raise NotFoundError(f"you have no webhook {hook_id!r}", details={"webhook_id": hook_id})
        return found


class WebhooksHandler(WebhookHandlerBase):
    """``GET``: the account's webhooks; ``POST``: a new one (``{"url", "filters"}``), 201 with its secret."""

    async def get(self) -> None:
        hooks = await self.ctx.stores.webhooks.list_webhooks(self.principal.user.id)
        limit = self.principal.tier.max_webhooks
        self.write_json({"data": [resource(h) for h in hooks], "meta": {"total": len(hooks), "limit": limit}})

    async def post(self) -> None:
        body = self.json_body()
        if not isinstance(body, dict):
            raise BadRequest("the body must be a JSON object", code="invalid_body")
        tier, user = self.principal.tier, self.principal.user
        url = parse_url(body.get("url"))
        filters, flt = parse_webhook_filters(body.get("filters", {}), tier)
        policy = Policy.from_settings(self.ctx.settings)
        try:
            hook = await create_webhook(
                self.ctx.stores, NewWebhook(user.id, url, flt, filters), tier.max_webhooks, policy, utcnow()
            )
        except UnsafeUrl as exc:
            raise bad_param("url", str(exc)) from exc
        except QuotaExceeded as exc:
            raise QuotaError(
                f"the {tier.name.capitalize()} plan allows at most {tier.max_webhooks} webhooks",
                details={"limit": tier.max_webhooks, "tier": tier.name, "upgrade_url": self.ctx.settings.upgrade_url},
            ) from exc
        self.set_header("Location", f"/api/v1/webhooks/{hook.id}")
        self.write_json({**resource(hook), "secret": hook.secret}, 201)


class WebhookHandler(WebhookHandlerBase):
    """``GET`` one webhook with its recent deliveries; ``PATCH`` ``{"paused": false}`` resumes it (``true``
    pauses it); ``DELETE`` it."""

    async def get(self, hook_id: str) -> None:
        hook = await self.own(hook_id)
        deliveries = await self.ctx.stores.webhooks.recent_deliveries(hook.id, RECENT_DELIVERIES)
        self.write_json({**resource(hook), "deliveries": [delivery_resource(d) for d in deliveries]})

    async def patch(self, hook_id: str) -> None:
        hook, body = await self.own(hook_id), self.json_body()
        if not isinstance(body, dict) or set(body) != {"paused"} or not isinstance(body["paused"], bool):
            raise bad_param("paused", 'the body must be {"paused": true} or {"paused": false}')
        self.write_json(resource(await set_paused(self.ctx.stores, hook, body["paused"])))

    async def delete(self, hook_id: str) -> None:
        hook = await self.own(hook_id)
        await self.ctx.stores.webhooks.delete_webhook(hook.user_id, hook.id)
        self.set_status(204)
        self.finish()


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    args = {"ctx": ctx}
    return [
        (r"/api/v1/webhooks", WebhooksHandler, args),
        (r"/api/v1/webhooks/([^/]+)", WebhookHandler, args),
    ]
