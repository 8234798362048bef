"""Webhooks on every backend: owner-scoped reads and deletes, the quota, due webhooks, one claim at a time,
state saved, deliveries kept newest first and bounded, and a deleted account's webhooks going with it."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest
from conformance.factories import at, replace, user

from store.base import Conflict, NotFound, QuotaExceeded
from store.ports import Stores
from store.ports.webhooks import Delivery, Webhook


def hook(owner_id: str, minutes: float = 0, **filters: list[str]) -> Webhook:
    return Webhook(
        id=str(uuid.uuid4()),
        user_id=owner_id,
        url="https://hooks.example.com/in",
        filters=dict(filters),
        secret="whsec_" + uuid.uuid4().hex,
        created_at=at(minutes=minutes),
        cursor="1700000000000-0",
    )


def delivery(webhook_id: str, minutes: float, ok: bool = True) -> Delivery:
    return Delivery(
        id=str(uuid.uuid4()),
        webhook_id=webhook_id,
        at=at(minutes=minutes),
        last_event_id=f"{int(minutes)}-0",
        events=3,
        ok=ok,
        status=200 if ok else 500,
        latency_ms=12.5,
        error=None if ok else "HTTP 500",
    )


@pytest.fixture
async def owners(stores: Stores) -> tuple[str, str]:
    ana, bob = user("ana@example.com", "pro"), user("bob@example.com", "pro")
    await stores.accounts.create_user(ana)
    await stores.accounts.create_user(bob)
    return ana.id, bob.id


async def test_round_trip_and_owner_scope(stores: Stores, owners: tuple[str, str]) -> None:
    ana, bob = owners
    later, first = hook(ana, 5, types=["ipv4"], kinds=["ioc"]), hook(ana, 1)
    for h in (later, first):
        assert await stores.webhooks.create_webhook(h, 10) == h
    assert await stores.webhooks.list_webhooks(ana) == [first, later]
    assert await stores.webhooks.get_webhook(ana, later.id) == later
    assert await stores.webhooks.get_webhook(bob, later.id) is None and await stores.webhooks.list_webhooks(bob) == []
    with pytest.raises(NotFound):
        await stores.webhooks.delete_webhook(bob, later.id)
    await stores.webhooks.delete_webhook(ana, later.id)
    assert await stores.webhooks.list_webhooks(ana) == [first]


async def test_quota_holds_under_concurrent_creations(stores: Stores, owners: tuple[str, str]) -> None:
    ana, _ = owners
    results = await asyncio.gather(
        *(stores.webhooks.create_webhook(hook(ana), 3) for _ in range(8)), return_exceptions=True
    )
    assert all(isinstance(r, Webhook | QuotaExceeded) for r in results)
    assert len(await stores.webhooks.list_webhooks(ana)) == len([r for r in results if isinstance(r, Webhook)]) <= 3
    with pytest.raises(Conflict):
        await stores.webhooks.create_webhook(hook(str(uuid.uuid4())), 3)


async def test_due_state_and_claims(stores: Stores, owners: tuple[str, str]) -> None:
    ana, _ = owners
    now = at(minutes=10)
    a, b, c = [await stores.webhooks.create_webhook(hook(ana, m), 10) for m in (1, 2, 3)]
    retrying = replace(b, failures=2, next_attempt=now + timedelta(minutes=5), last_error="HTTP 500", cursor="5-1")
    await stores.webhooks.save_state(retrying)
    await stores.webhooks.save_state(replace(c, paused=True, last_error="gave up"))
    assert [h.id for h in await stores.webhooks.due_webhooks(now)] == [a.id]
    assert [h.id for h in await stores.webhooks.due_webhooks(now + timedelta(minutes=5))] == [a.id, b.id]
    assert await stores.webhooks.get_webhook(ana, b.id) == retrying
    assert await stores.webhooks.claim(a.id, now, now + timedelta(minutes=1))
    assert not await stores.webhooks.claim(a.id, now, now + timedelta(minutes=1))  # held by the first
    assert await stores.webhooks.claim(a.id, now + timedelta(minutes=1), now + timedelta(minutes=2))  # lapsed
    await stores.webhooks.release(a.id)
    assert await stores.webhooks.claim(a.id, now, now + timedelta(minutes=1))


async def test_deliveries_newest_first_and_bounded(stores: Stores, owners: tuple[str, str]) -> None:
    ana, _ = owners
    h, other = hook(ana), hook(ana)
    for w in (h, other):
        await stores.webhooks.create_webhook(w, 10)
    made = [delivery(h.id, m, ok=m % 2 == 0) for m in range(6)]
    for d in made:
        await stores.webhooks.add_delivery(d, keep=4)
    await stores.webhooks.add_delivery(delivery(other.id, 1), keep=4)
    assert await stores.webhooks.recent_deliveries(h.id, 10) == made[:1:-1]
    assert await stores.webhooks.recent_deliveries(h.id, 2) == made[:3:-1]


async def test_a_deleted_account_takes_its_webhooks(stores: Stores, owners: tuple[str, str]) -> None:
    ana, bob = owners
    mine, theirs = hook(ana), hook(bob)
    for w in (mine, theirs):
        await stores.webhooks.create_webhook(w, 10)
        await stores.webhooks.add_delivery(delivery(w.id, 1), keep=4)
    await stores.accounts.delete_user(ana)
    assert await stores.webhooks.list_webhooks(ana) == [] and await stores.webhooks.recent_deliveries(mine.id, 5) == []
    assert [h.id for h in await stores.webhooks.due_webhooks(at(minutes=5))] == [theirs.id]
