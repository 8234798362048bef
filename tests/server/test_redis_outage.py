"""Redis down: exports still answer (built on demand, X-Cache: bypass), never a hang or a stack trace,
and the server recovers by itself when Redis returns."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import orjson
import pytest
from support import make_settings, start_redis, start_server, stop_server

from store.records import Ioc, utcnow

pytestmark = pytest.mark.redis


async def test_exports_and_stats_survive_a_redis_outage(tmp_path: Path) -> None:
    redis_server = start_redis(tmp_path / "redis")
    server = await start_server(make_settings(tmp_path, redis_url=redis_server.url))
    now = utcnow()
    await server.ctx.iocs.upsert_iocs([Ioc("domain", f"c2-{i}.bad-example.org", "high", "Feed", "commercial",
                                            now - timedelta(hours=2), now, now) for i in range(20)])
    try:
        async with server.client(server.pro_key) as http:
            before = await http.get("/api/v1/iocs/stix")
            redis_server.stop()
            during = await http.get("/api/v1/iocs/stix")
            stats = await http.get("/api/v1/iocs/stats")
            health = await http.get("/healthz")
            redis_server = start_redis(tmp_path / "redis", port=redis_server.port)
            await asyncio.sleep(0.5)
            after = await http.get("/api/v1/iocs/stix")
            again = await http.get("/api/v1/iocs/stix")
    finally:
        await stop_server(server)
        redis_server.stop()
    assert before.status_code == 200 and before.headers["X-Cache"] == "miss"
    assert during.status_code == 200 and during.headers["X-Cache"] == "bypass"
    # The same objects: the bundle's id names its window, whose lower bound (the lookback floor) moves with
    # the clock's second, so a loaded machine may build the two a second apart.
    assert orjson.loads(during.content)["objects"] == orjson.loads(before.content)["objects"]
    assert "X-RateLimit-Limit" in during.headers
    assert stats.status_code == 200 and stats.headers["X-Cache"] == "bypass"
    assert health.status_code == 503 and health.json()["status"] == "degraded"
    assert health.json()["cache"]["status"] == "unavailable" and health.json()["database"]["status"] == "ok"
    assert (after.status_code, again.status_code) == (200, 200)
    assert after.headers["X-Cache"] == "miss" and again.headers["X-Cache"] == "hit"
