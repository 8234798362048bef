"""Deliveries to a receiver on 127.0.0.1, driven round by round with a controlled clock: signed batches in
order, retried with backoff until acknowledged, each event acknowledged once; pause after repeated failure,
and resume; redirects and private addresses refused at delivery."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from conformance.factories import user
from mongo_support import backend_stores, dispose_stores, server_backends
from webhook_support import Receiver, start_receiver, stop_receiver

from store.event_filter import StreamFilter
from store.ports import Stores
from store.ports.events import NewEvent
from store.ports.webhooks import Webhook
from store.sqlite import sqlite_stores
from webhooks.delivery import Policy, deliver_due, make_client
from webhooks.guard import UnsafeUrl
from webhooks.service import NewWebhook, create_webhook, set_paused

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
POLICY = Policy(allow_private=True)
EVERY_EVENT = StreamFilter()


@pytest.fixture(params=server_backends())
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    opened = backend_stores(str(request.param)) or sqlite_stores(tmp_path / "ctiwire.db")
    await opened.open()
    yield opened
    await dispose_stores(opened)


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    started = start_receiver(Receiver())
    yield started
    await stop_receiver(started)


def ioc(n: int, kind: str = "ipv4") -> NewEvent:
    return NewEvent("ioc", orjson.dumps({"type": kind, "value": f"192.0.2.{n}", "confidence": "high"}))


def article(n: int) -> NewEvent:
    return NewEvent("article", orjson.dumps({"title": f"Article {n}", "severity_score": 5.0}))


async def hook_for(stores: Stores, receiver: Receiver, flt: StreamFilter = EVERY_EVENT) -> Webhook:
    ana = user("ana@example.com", "pro")
    await stores.accounts.create_user(ana)
    hook = await create_webhook(stores, NewWebhook(ana.id, receiver.url, flt), 10, POLICY, T0)
    receiver.secret = hook.secret
    return hook


async def reread(stores: Stores, hook: Webhook) -> Webhook:
    found = await stores.webhooks.get_webhook(hook.user_id, hook.id)
    assert found is not None
    return found


async def run_rounds(stores: Stores, policy: Policy, rounds: int = 60) -> list[datetime]:
    """Deliver round by round, moving the clock to the next retry; the times of the rounds run."""
    now, times = T0, []
    for _ in range(rounds):
        times.append(now)
        await deliver_due(stores, policy, now)
        waiting = [h.next_attempt for h in await stores.webhooks.due_webhooks(now + timedelta(days=3))]
        if not any(waiting):
            return times
        now = max(now, min(t for t in waiting if t is not None))
    return times


async def test_retried_until_acknowledged_in_order_each_event_once(stores: Stores, receiver: Receiver) -> None:
    await stores.events.append([ioc(0)])  # before the webhook: not delivered
    hook = await hook_for(stores, receiver, StreamFilter(kinds=("ioc",), types=("ipv4",)))
    appended = [ioc(n) if n % 3 else ioc(n, "domain") for n in range(1, 231)] + [article(n) for n in range(5)]
    ids = await stores.events.append(appended)
    wanted = [str(i) for i, e in zip(ids, appended, strict=True) if e.kind == "ioc" and b'"ipv4"' in e.data]
    receiver.script.extend([500, 500])
    times = await run_rounds(stores, POLICY)
    assert [e["id"] for e in receiver.acknowledged] == wanted  # in order, each once
    assert {e["event"] for e in receiver.acknowledged} == {"ioc"} and receiver.acknowledged[0]["data"]["type"] == "ipv4"
    assert all(r["signed"] for r in receiver.requests) and all(r["event_id"] == r["ids"][-1] for r in receiver.requests)
    assert [len(r["ids"]) for r in receiver.requests] == [100, 100, 100, len(wanted) - 100]
    assert receiver.requests[0]["ids"] == receiver.requests[2]["ids"]  # the failed batch, sent again whole
    assert [b - a for a, b in zip(times, times[1:3], strict=False)] == [timedelta(seconds=30), timedelta(seconds=60)]
    deliveries = await stores.webhooks.recent_deliveries(hook.id, 10)
    assert [d.ok for d in deliveries] == [True, True, False, False]
    assert [d.status for d in deliveries] == [200, 200, 500, 500] and deliveries[0].last_event_id == wanted[-1]
    assert all(d.latency_ms >= 0 for d in deliveries)


async def test_paused_after_repeated_failure_then_resumed(stores: Stores, receiver: Receiver) -> None:
    policy = replace(POLICY, max_failures=3)
    hook = await hook_for(stores, receiver)
    ids = await stores.events.append([ioc(1), article(2)])
    receiver.then = 503
    await run_rounds(stores, policy)
    assert len(receiver.requests) == 3 and receiver.acknowledged == []
    paused = await reread(stores, hook)
    assert paused.paused and paused.last_error == "HTTP 503" and paused.state == "paused"
    assert await stores.webhooks.due_webhooks(T0 + timedelta(days=30)) == []
    receiver.then = 204
    await set_paused(stores, paused, False)
    await deliver_due(stores, policy, T0 + timedelta(days=1))
    assert [e["id"] for e in receiver.acknowledged] == [str(i) for i in ids]
    assert (await reread(stores, hook)).state == "active"


async def test_a_redirect_is_a_failure_and_not_followed(stores: Stores, receiver: Receiver) -> None:
    hook = await hook_for(stores, receiver)
    await stores.events.append([ioc(1)])
    receiver.script.append(302)
    await deliver_due(stores, POLICY, T0)
    assert [r["path"] for r in receiver.requests] == ["/hook"] and receiver.acknowledged == []
    assert (await reread(stores, hook)).last_error == "HTTP 302"


async def test_a_private_address_is_refused_at_delivery(stores: Stores, receiver: Receiver) -> None:
    hook = await hook_for(stores, receiver)  # accepted while private addresses were allowed
    await stores.events.append([ioc(1)])
    await deliver_due(stores, replace(POLICY, allow_private=False), T0)
    assert receiver.requests == []
    failed = await reread(stores, hook)
    assert failed.failures == 1 and (failed.last_error or "").startswith("refused: ")
    assert "127.0.0.1" in (failed.last_error or "") and hook.secret not in (failed.last_error or "")


def test_the_default_retries_span_more_than_a_day() -> None:
    policy = Policy()
    assert sum((policy.delay(n) for n in range(1, policy.max_failures)), timedelta()) >= timedelta(hours=24)


async def test_the_connection_itself_is_guarded(receiver: Receiver) -> None:
    """Past the URL check (a name re-pointed after it), the connection goes only to an allowed address."""
    async with make_client(allow_private=False) as guarded:
        with pytest.raises(UnsafeUrl, match="127.0.0.1"):
            await guarded.post(receiver.url, content=b'{"events": []}')
    assert receiver.requests == []
    async with make_client(allow_private=True) as allowed:
        assert (await allowed.post(receiver.url, content=b'{"events": []}')).status_code == 200


async def test_an_owner_moved_to_free_finds_the_webhook_paused(stores: Stores, receiver: Receiver) -> None:
    hook = await hook_for(stores, receiver)
    owner = await stores.accounts.get_user(user_id=hook.user_id)
    await stores.accounts.update_user(replace(owner, tier="free"))
    await stores.events.append([ioc(1)])
    await deliver_due(stores, POLICY, T0)
    assert receiver.requests == []
    paused = await reread(stores, hook)
    assert paused.paused and paused.last_error == "the Free plan has no webhooks"
