"""Redis SIGKILLed and restarted while clients keep asking: only the documented answers, no
request hangs past the Redis timeout, and the server recovers by itself within seconds."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
from support import cli_env, ctiwire, spawn_server, start_redis

pytestmark = [pytest.mark.redis, pytest.mark.slow]  # real redis-server and server processes

PATHS = ["/api/v1/iocs/stix", "/api/v1/iocs/stats", "/api/v1/articles?limit=20", "/api/v1/iocs?limit=50"]


def test_redis_killed_and_restarted_under_load(tmp_path: Path) -> None:
    redis = start_redis(tmp_path / "redis")
    env = cli_env(tmp_path / "data", CTIWIRE_REDIS_URL=redis.url, CTIWIRE_RATE_LIMIT_SCALE="1000")
    ctiwire(env, "seed", "--demo", "--articles", "300")  # production (Redis): demo accounts on purpose
    server = spawn_server(env, "--no-seed")
    key = json.loads((tmp_path / "data" / "demo-keys.json").read_text())["pro"]
    results: list[tuple[float, str, int, float, str]] = []
    stop = time.monotonic() + 14
    lock = threading.Lock()

    def load(n: int) -> None:
        with httpx.Client(base_url=server.url, headers={"X-API-Key": key}, timeout=20) as http:
            i = n
            while time.monotonic() < stop:
                path, started = PATHS[i % len(PATHS)], time.monotonic()
                i += 1
                try:
                    answer = http.get(path)
                    status, cache = answer.status_code, answer.headers.get("X-Cache", "")
                except httpx.HTTPError:
                    status, cache = 0, ""
                with lock:
                    results.append((started, path, status, time.monotonic() - started, cache))

    workers = [threading.Thread(target=load, args=(n,)) for n in range(6)]
    begun = time.monotonic()
    for worker in workers:
        worker.start()
    try:
        time.sleep(3)
        redis.process.send_signal(signal.SIGKILL)
        redis.process.wait(timeout=10)
        killed_at = time.monotonic()
        time.sleep(4)
        redis = start_redis(tmp_path / "redis", port=redis.port)
        back_at = time.monotonic()
        for worker in workers:
            worker.join(timeout=40)
    finally:
        server.stop()
        redis.stop()
    statuses = {status for _, _, status, _, _ in results}
    assert statuses <= {200, 503}, statuses  # no other 5xx, no dropped connection (0)
    assert max(duration for *_, duration, _ in results) < 2.0 + 3.0  # the Redis timeout plus a margin
    during = [r for r in results if killed_at + 0.5 < r[0] < back_at]
    assert during and any(cache == "bypass" for *_, cache in during)  # exports built directly meanwhile
    recovered = [r for r in results if r[0] > back_at + 3 and r[1] == "/api/v1/iocs/stix"]
    assert recovered and all(cache in ("hit", "miss") for *_, cache in recovered), recovered[:3]
    assert begun < killed_at < back_at
