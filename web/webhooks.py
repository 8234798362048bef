"""``/account/webhooks``: the signed-in account's webhooks: create one (its signing secret shown once, on
the page that answers the form), see each one's state, last error and recent deliveries (status and
latency), resume a paused one, delete one.

The form ends in the API's own checks (``server.webhooks``: the stream's filter parser, the address
guard, the plan's quota), so a value the API refuses is refused here with the same words.
"""

from __future__ import annotations

import re
from typing import Any

from tornado.web import HTTPError

from config.tiers import TIERS
from server.errors import ApiError
from server.webhooks import FILTERS, RECENT_DELIVERIES, parse_url, parse_webhook_filters
from store.base import NotFound, QuotaExceeded
from store.ports.webhooks import Webhook
from store.records import utcnow
from web.base import PageHandler
from webhooks.delivery import Policy
from webhooks.guard import UnsafeUrl
from webhooks.service import NewWebhook, create_webhook, set_paused

HOOK_ID = re.compile(r"^[0-9a-f]{32}$")
HINTS = {
    "kinds": "article, ioc",
    "type": "ipv4, domain, url, sha256, …",
    "confidence": "high, medium, low",
    "category": "an article category or a source category",
    "severity": "critical, high, medium, low",
    "min_severity": "0-10",
    "industry": "finance, healthcare, …",
    "source": "exact source names",
}


class WebhookPage(PageHandler):
    async def own(self, hook_id: str) -> Webhook:
        found = await self.ctx.stores.webhooks.get_webhook(self.user.id, hook_id) if HOOK_ID.match(hook_id) else None
        if found is None:
            raise HTTPError(404)
        return found

    async def list_page(self, form: dict[str, str], error: str | None = None, created: Webhook | None = None) -> None:
        tier = TIERS[self.user.tier]
        hooks = await self.ctx.stores.webhooks.list_webhooks(self.user.id)
        rows = [(h, await self.ctx.stores.webhooks.recent_deliveries(h.id, RECENT_DELIVERIES)) for h in hooks]
        self.page(
            "webhooks.html", rows=rows, form=form, error=error, created=created, tier=tier, filters=FILTERS, hints=HINTS
        )


class WebhooksHandler(WebhookPage):
    """``GET``: the webhooks and the create form; ``POST`` creates one and shows its secret once."""

    async def get(self) -> None:
        await self.list_page({})

    async def post(self) -> None:
        form = {name: self.get_body_argument(name, "").strip() for name in ("url", *FILTERS)}
        tier = TIERS[self.user.tier]
        try:
            hook = await self._create(form, tier)
        except (ApiError, UnsafeUrl, QuotaExceeded) as exc:
            self.set_status(400)
            await self.list_page(form, exc.message if isinstance(exc, ApiError) else str(exc))
            return
        await self.list_page({}, created=hook)

    async def _create(self, form: dict[str, str], tier: Any) -> Webhook:
        if tier.max_webhooks == 0:
            raise QuotaExceeded(f"the {tier.name.capitalize()} plan has no webhooks: they come with Pro")
        url = parse_url(form["url"])
        filters, flt = parse_webhook_filters({k: v for k, v in form.items() if k != "url" and v}, tier)
        new = NewWebhook(self.user.id, url, flt, filters)
        policy = Policy.from_settings(self.ctx.settings)
        try:
            return await create_webhook(self.ctx.stores, new, tier.max_webhooks, policy, utcnow())
        except QuotaExceeded as exc:
            raise QuotaExceeded(f"your plan's {tier.max_webhooks} webhooks are all in use: delete one first") from exc


class WebhookActionHandler(WebhookPage):
    """``POST /account/webhooks/{id}/resume`` (deliveries start again) and ``.../delete``."""

    async def post(self, hook_id: str, action: str) -> None:
        hook = await self.own(hook_id)
        if action == "resume":
            await set_paused(self.ctx.stores, hook, False)
            self.flash("Webhook resumed: deliveries start again from the last acknowledged event.")
        else:
            try:
                await self.ctx.stores.webhooks.delete_webhook(self.user.id, hook.id)
            except NotFound:
                pass  # deleted meanwhile (another tab, the API): the outcome asked for
            self.flash("Webhook deleted.")
        self.redirect("/account/webhooks")
