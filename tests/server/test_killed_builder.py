"""A server killed while it builds an export does not hold the next requests hostage.

Its build lock has a short TTL that it extended while alive; once it is killed (SIGKILL: no cleanup),
the lock expires within that TTL and the next server process builds, stores and answers.
"""

from __future__ import annotations

import json
import signal
import threading
import time

import httpx
import pytest
from support import RedisServer, cli_env, ctiwire, spawn_server, wait_for

from exporters.build_once import LOCK_TTL

pytestmark = [pytest.mark.redis, pytest.mark.slow]  # server processes, a real redis-server


def test_a_builder_killed_mid_build_frees_the_export_within_the_lock_ttl(tmp_path, redis_server: RedisServer) -> None:
    import redis

    redis.Redis.from_url(redis_server.url).flushall()
    env = cli_env(tmp_path, CTIWIRE_REDIS_URL=redis_server.url, CTIWIRE_SEED_ARTICLES="1500")
    ctiwire(env, "seed", "--demo")  # production (Redis): the demo accounts only on purpose
    slow = spawn_server({**env, "CTIWIRE_BUILD_DELAY_MS": "3000"}, "--no-seed")
    pro = json.loads((tmp_path / "demo-keys.json").read_text())["pro"]
    headers = {"Authorization": f"Bearer {pro}"}
    params = {"limit": "777"}  # an on-demand export: built by the request, under the lock
    threading.Thread(target=lambda: _quietly(slow.url, headers, params), daemon=True).start()
    wait_for(lambda: any(k.startswith(b"lock:") for k in redis.Redis.from_url(redis_server.url).keys()), 20,
             "the slow server to take the build lock")
    slow.process.send_signal(signal.SIGKILL)
    slow.process.wait(timeout=10)
    fresh = spawn_server(env, "--no-seed")
    try:
        started = time.monotonic()
        answer = httpx.get(fresh.url + "/api/v1/iocs/stix", params=params, headers=headers, timeout=60)
        elapsed = time.monotonic() - started
    finally:
        fresh.stop()
    assert answer.status_code == 200 and answer.json()["type"] == "bundle"
    assert elapsed < LOCK_TTL + 5, f"the next request waited {elapsed:.1f} s"  # the lock frees within LOCK_TTL


def _quietly(url: str, headers: dict[str, str], params: dict[str, str]) -> None:
    try:
        httpx.get(url + "/api/v1/iocs/stix", params=params, headers=headers, timeout=60)
    except httpx.HTTPError:
        pass  # the server is killed under this request

