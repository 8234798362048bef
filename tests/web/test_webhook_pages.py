"""``/account/webhooks`` over real HTTP on every backend: Pro only, create through the form (the secret shown
once), the API's checks with its words, a paused webhook's last error and resume, the deliveries table,
delete, and another account's webhook being the 404 page."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import orjson
from support import RunningServer
from web_support import browser, post_form, sign_up
from webhook_support import Receiver, start_receiver, stop_receiver

from store import accounts
from store.ports.events import NewEvent
from store.records import utcnow
from webhooks.delivery import Policy, deliver_due

ANA, BOB = "ana@corp.example", "bob@corp.example"
CARD = re.compile(r'data-testid="webhook-card" data-webhook-id="([0-9a-f]{32})"')
SECRET = re.compile(r'data-testid="secret">(whsec_[0-9a-f]+)<')


async def test_the_lifecycle_of_a_webhook_through_the_page(site: RunningServer) -> None:
    receiver = start_receiver(Receiver())
    try:
        async with browser(site) as ana:
            await sign_up(ana, ANA)
            free = await ana.get("/account/webhooks")
            assert "Webhooks come with Pro" in free.text and "create-webhook-form" not in free.text
            refused = await post_form(ana, "/account/webhooks", {"url": receiver.url})
            assert refused.status_code == 400 and "come with Pro" in refused.text
            await accounts.set_tier(site.ctx.accounts, ANA, "pro")
            bad = await post_form(ana, "/account/webhooks", {"url": receiver.url, "type": "nonsense"})
            assert bad.status_code == 400 and "filters.type" in html.unescape(bad.text)
            made = await post_form(ana, "/account/webhooks", {"url": receiver.url, "kinds": "ioc"})
            assert made.status_code == 200
            receiver.secret = SECRET.search(made.text).group(1)  # type: ignore[union-attr]
            hook_id = CARD.search(made.text).group(1)  # type: ignore[union-attr]
            listed = await ana.get("/account/webhooks")
            assert receiver.secret not in listed.text and "No deliveries yet" in listed.text

            await site.ctx.stores.events.append([NewEvent("ioc", orjson.dumps({"value": "192.0.2.1"}))])
            receiver.then = 500
            policy = replace(Policy.from_settings(site.ctx.settings), max_failures=1)
            await deliver_due(site.ctx.stores, policy, utcnow())
            paused = (await ana.get("/account/webhooks")).text
            assert "Last error: HTTP 500" in paused and 'data-testid="resume-webhook"' in paused
            assert "<td>500</td>" in paused and " ms</td>" in paused

            receiver.then = 200
            resumed = await post_form(ana, f"/account/webhooks/{hook_id}/resume", {}, page="/account/webhooks")
            assert resumed.status_code == 302
            await deliver_due(site.ctx.stores, policy, utcnow())
            shown = (await ana.get("/account/webhooks")).text
            assert "<strong>active</strong>" in shown and "<td>200</td>" in shown and "resume-webhook" not in shown
            assert [e["data"]["value"] for e in receiver.acknowledged] == ["192.0.2.1"]

            async with browser(site) as bob:
                await sign_up(bob, BOB)
                other = await post_form(bob, f"/account/webhooks/{hook_id}/delete", {}, page="/account/webhooks")
                assert other.status_code == 404
            deleted = await post_form(ana, f"/account/webhooks/{hook_id}/delete", {}, page="/account/webhooks")
            assert deleted.status_code == 302
            assert "No webhooks yet" in (await ana.get("/account/webhooks")).text
    finally:
        await stop_receiver(receiver)
