"""A real Celery worker delivers webhooks: events appended to the production log (Redis Streams) reach a
receiver on 127.0.0.1, signed, after a failed first attempt, each acknowledged once."""

from __future__ import annotations

import asyncio
import time

import orjson
import pytest
from conformance.factories import user
from support import make_settings, wait_for
from webhook_support import Receiver, start_receiver, stop_receiver

from store.event_filter import StreamFilter
from store.factory import make_stores
from store.ports.events import NewEvent
from store.records import utcnow
from webhooks.delivery import Policy
from webhooks.service import NewWebhook, create_webhook

pytestmark = [pytest.mark.redis, pytest.mark.slow]  # a real Celery worker


async def test_a_worker_delivers_and_retries(worker_env, tmp_path) -> None:
    worker_env.env.update(CTIWIRE_WEBHOOK_ALLOW_PRIVATE="1", CTIWIRE_WEBHOOK_BACKOFF_SECONDS="0.5")
    stores = make_stores(make_settings(tmp_path, redis_url=worker_env.redis.url))
    await stores.open()
    receiver = start_receiver(Receiver())
    try:
        owner = user("ana@example.com", "pro")
        await stores.accounts.create_user(owner)
        hook = await create_webhook(
            stores, NewWebhook(owner.id, receiver.url, StreamFilter()), 10, Policy(allow_private=True), utcnow()
        )
        receiver.secret = hook.secret
        receiver.script.append(500)
        ids = await stores.events.append([NewEvent("ioc", orjson.dumps({"value": f"192.0.2.{n}"})) for n in range(3)])
        worker_env.start_worker()
        worker_env.send("ctiwire.deliver_webhooks")
        await asyncio.to_thread(wait_for, lambda: len(receiver.requests) == 1, 60, "the first attempt", worker_env)
        time.sleep(0.6)  # past the backoff
        worker_env.send("ctiwire.deliver_webhooks")
        await asyncio.to_thread(wait_for, lambda: len(receiver.acknowledged) == 3, 60, "the retry", worker_env)
        assert [e["id"] for e in receiver.acknowledged] == [str(i) for i in ids]
        assert [r["status"] for r in receiver.requests] == [500, 200] and all(r["signed"] for r in receiver.requests)
    finally:
        await stop_receiver(receiver)
        await stores.close()
