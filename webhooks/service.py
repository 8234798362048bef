"""Creating, describing and resuming webhooks: what the API (/api/v1/webhooks) and the account web share."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from store.event_filter import StreamFilter
from store.ports import Stores
from store.ports.webhooks import Delivery, Webhook
from store.records import iso
from webhooks.delivery import Policy
from webhooks.guard import check_url
from webhooks.signing import new_secret


@dataclass(frozen=True, slots=True)
class NewWebhook:
    """What the owner asked for: the URL, the filter parameters as given and as parsed."""

    user_id: str
    url: str
    flt: StreamFilter
    filters: dict[str, list[str]] = field(default_factory=dict)


async def create_webhook(stores: Stores, new: NewWebhook, max_webhooks: int, policy: Policy, now: datetime) -> Webhook:
    """A new webhook that receives the events appended from now on; UnsafeUrl, QuotaExceeded."""
    await check_url(new.url, policy.allow_private)
    last = (await stores.events.horizon()).last
    hook = Webhook(
        id=uuid.uuid4().hex,
        user_id=new.user_id,
        url=new.url,
        filters=new.filters,
        match=new.flt.to_doc(),
        secret=new_secret(),
        created_at=now,
        cursor=str(last) if last else None,
    )
    return await stores.webhooks.create_webhook(hook, max_webhooks)


async def set_paused(stores: Stores, hook: Webhook, paused: bool) -> Webhook:
    """Paused by its owner, or active again from where it stopped (the events after its cursor are
    delivered at once)."""
    changed = replace(hook, paused=paused, failures=0, next_attempt=None)
    await stores.webhooks.save_state(changed)
    return changed


def resource(hook: Webhook) -> dict[str, Any]:
    """The webhook as the API shows it: never the secret (it is shown once, in the creation's answer)."""
    return {
        "id": hook.id,
        "url": hook.url,
        "filters": hook.filters,
        "state": hook.state,
        "last_event_id": hook.cursor,
        "failures": hook.failures,
        "next_attempt": iso(hook.next_attempt) if hook.next_attempt else None,
        "last_error": hook.last_error,
        "created_at": iso(hook.created_at),
    }


def delivery_resource(d: Delivery) -> dict[str, Any]:
    return {
        "at": iso(d.at),
        "last_event_id": d.last_event_id,
        "events": d.events,
        "ok": d.ok,
        "status": d.status,
        "latency_ms": d.latency_ms,
        "error": d.error,
    }
