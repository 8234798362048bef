"""A real Celery worker process against a real redis-server, sharing a SQLite file with the test."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import REPO, RedisServer, cli_env

from store.ports import Stores
from store.sqlite import SqliteStore, sqlite_stores


@dataclass
class WorkerEnv:
    data_dir: Path
    env: dict[str, str]
    redis: RedisServer
    procs: list[subprocess.Popen[bytes]]

    def start_worker(self, *extra: str) -> subprocess.Popen[bytes]:
        log = open(self.data_dir / f"worker-{len(self.procs)}.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--pool", "solo",
                                 "--loglevel", "INFO", "--without-gossip", "--without-mingle", *extra],
                                env=self.env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def log(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.data_dir.glob("worker-*.log")))

    def send(self, name: str, *args: object) -> None:
        from celery import Celery

        client = Celery("ctiwire-test", broker=self.redis.url)
        client.send_task(name, args=list(args))
        client.close()

    def store(self) -> Stores:
        return sqlite_stores(self.data_dir / "ctiwire.sqlite3")


@pytest.fixture
def worker_env(tmp_path: Path, redis_server: RedisServer) -> Iterator[WorkerEnv]:
    import redis

    redis.Redis.from_url(redis_server.url).flushall()
    env = cli_env(tmp_path, CTIWIRE_REDIS_URL=redis_server.url, CTIWIRE_TASK_VISIBILITY_TIMEOUT_SECONDS="4",
                  CTIWIRE_LOG_LEVEL="INFO")
    store = SqliteStore(tmp_path / "ctiwire.sqlite3")
    asyncio.run(_open_close(store))
    wenv = WorkerEnv(tmp_path, env, redis_server, [])
    yield wenv
    for proc in wenv.procs:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


async def _open_close(store: SqliteStore) -> None:
    await store.open()
    await store.close()
