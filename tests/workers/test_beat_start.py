"""Beat queues a precompute as it starts, not only when its first 15-minute period ends."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from support import REPO

pytestmark = [pytest.mark.redis, pytest.mark.slow]  # a real beat process


def test_beat_queues_a_precompute_at_start(worker_env) -> None:  # type: ignore[no-untyped-def]
    import redis

    client = redis.Redis.from_url(worker_env.redis.url)
    beat = subprocess.Popen([sys.executable, "-m", "celery", "-A", "workers.app", "beat", "--loglevel", "INFO",
                             "--schedule", str(worker_env.data_dir / "beat-schedule")],
                            env=worker_env.env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, queued = time.monotonic() + 30, []
        while time.monotonic() < deadline and not queued:
            queued = [m for m in client.lrange("celery", 0, -1) if b"ctiwire.precompute_all" in m]
            time.sleep(0.3)
    finally:
        beat.terminate()
        beat.wait(timeout=20)
    assert queued, "beat queued no precompute at start"
