"""A real Celery worker precomputes the IOC stats into Redis; the server then serves them as a hit."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
import redis
from support import make_settings, start_server, stop_server, wait_for

from store.records import Ioc, utcnow

pytestmark = [pytest.mark.redis, pytest.mark.slow]  # real Celery workers


async def _seed(stores, n: int) -> None:
    await stores.open()
    now = utcnow()
    await stores.iocs.upsert_iocs([Ioc("domain", f"c2-{i}.bad-example.org", "high", "Feed", "commercial",
                                 now - timedelta(hours=i), now, now, sources=["Feed"]) for i in range(n)])
    await stores.close()


async def test_worker_precomputes_stats_and_server_serves_them(worker_env, tmp_path) -> None:
    await _seed(worker_env.store(), 25)
    worker_env.start_worker()
    worker_env.send("ctiwire.precompute_stats", "pro")
    client = redis.Redis.from_url(worker_env.redis.url)
    await asyncio.to_thread(wait_for, lambda: len(client.keys("ctiwire:stats:pro:*")) == 4, 60,
                            "four stats windows in Redis", worker_env)
    assert not client.keys("*:tmp:*")
    server = await start_server(make_settings(tmp_path, redis_url=worker_env.redis.url))
    try:
        async with server.client(server.pro_key) as http:
            response = await http.get("/api/v1/iocs/stats", params={"window": "30d"})
    finally:
        await stop_server(server)
    assert response.status_code == 200
    assert response.headers["X-Cache"] == "hit"
    assert response.json()["total"] == 25
