"""Real Celery workers build the exports into a real Redis: served byte-identical to
an on-demand build, and a worker killed mid-build never leaves half an export; the task is redelivered."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from datetime import timedelta

import pytest
import redis
from support import make_settings, start_server, stop_server, wait_for

from exporters import precompute
from exporters.build_once import Entry
from store.records import Ioc, parse_iso, utcnow

pytestmark = [pytest.mark.redis, pytest.mark.slow]  # real Celery workers
FORMATS = ("stix", "misp", "cef", "openioc", "sigma")
# The server's default limit: 100 IOCs, except MISP whose default is the tier cap (server/exports.py).
DEFAULT_LIMIT = {fmt: 10_000 if fmt == "misp" else precompute.DEFAULT_EXPORT_LIMIT for fmt in FORMATS}


async def _seed(stores, n: int) -> None:
    await stores.open()
    now = utcnow()
    values = [(f"c2-{i}.bad-example.org", f"45.{i // 65536}.{i // 256 % 256}.{i % 256}", f"{i:064x}")[i % 3]
              for i in range(n)]
    rows = [Ioc(("domain", "ipv4", "sha256")[i % 3], value, "high", "Feed", "commercial",
                now - timedelta(hours=1, seconds=i), now, now, sources=["Feed"]) for i, value in enumerate(values)]
    await stores.iocs.upsert_iocs(rows)
    await stores.close()


def _live_keys(client: redis.Redis, fmt: str) -> list[bytes]:
    return [k for k in client.keys(f"ctiwire:export:{fmt}:*") if b":tmp:" not in k]


async def test_worker_builds_are_served_byte_identical_to_on_demand(worker_env, tmp_path) -> None:
    await _seed(worker_env.store(), 60)
    worker_env.start_worker()
    for fmt in FORMATS:
        worker_env.send("ctiwire.build_export", fmt, "pro", "7d", DEFAULT_LIMIT[fmt])
    client = redis.Redis.from_url(worker_env.redis.url)
    await asyncio.to_thread(wait_for, lambda: all(_live_keys(client, f) for f in FORMATS), 90,
                            "five exports in Redis", worker_env)
    server = await start_server(make_settings(tmp_path, redis_url=worker_env.redis.url))
    try:
        async with server.client(server.pro_key) as http:
            served = {f: await http.get(f"/api/v1/iocs/{f}", params={"window": "7d"}) for f in FORMATS}
        version = await server.ctx.iocs.data_version()
        for fmt, response in served.items():
            assert response.status_code == 200 and response.headers["X-Cache"] == "hit", (fmt, response.text[:200])
            request = precompute.ExportRequest(fmt, "pro", "7d", limit=DEFAULT_LIMIT[fmt])
            cached = Entry.decode(client.get(_live_keys(client, fmt)[0]) or b"")
            worker_clock = parse_iso(cached.meta.floor or "") + timedelta(days=7)  # the second it was built at
            fresh = await precompute.build_export(server.ctx.stores, request, worker_clock, version)
            assert response.content == fresh.body, f"{fmt}: the cached export differs from an on-demand build"
    finally:
        await stop_server(server)


async def test_a_worker_killed_mid_build_leaves_no_partial_export(worker_env) -> None:
    await _seed(worker_env.store(), 3000)
    slow = {**worker_env.env, "CTIWIRE_BUILD_DELAY_MS": "1500"}  # six 500-row batches: about 9 s per build
    original_env = worker_env.env
    worker_env.env = slow
    victim = worker_env.start_worker()
    worker_env.env = original_env
    worker_env.send("ctiwire.build_export", "stix", "pro", "30d", 10_000)
    await asyncio.to_thread(wait_for, lambda: "ctiwire.build_export" in worker_env.log() and "received"
                            in worker_env.log(), 60, "the worker to receive the task", worker_env)
    await asyncio.sleep(2.0)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=10)
    client = redis.Redis.from_url(worker_env.redis.url)
    assert not _live_keys(client, "stix"), "a killed build left an export behind"
    started = time.monotonic()
    worker_env.start_worker()  # the unacknowledged task comes back after the visibility timeout
    await asyncio.to_thread(wait_for, lambda: bool(_live_keys(client, "stix")), 120,
                            "the redelivered build to complete", worker_env)
    entry = Entry.decode(client.get(_live_keys(client, "stix")[0]) or b"")
    bundle = json.loads(entry.body)
    assert entry.meta.rows == 3000 and sum(o["type"] == "indicator" for o in bundle["objects"]) == 3000
    assert time.monotonic() - started < 120
