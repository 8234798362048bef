"""Fixtures shared by every test folder: a real redis-server, a running ctiwire server, keys."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from tornado.httpserver import HTTPServer

from config.settings import Settings, load_settings
from server.app import build_context, close_context, make_app
from server.context import AppContext
from store import accounts

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RedisServer:
    port: int
    process: subprocess.Popen[bytes]
    dir: Path

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def start_redis(workdir: Path, port: int | None = None) -> RedisServer:
    """A real redis-server on a free loopback port, without persistence."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (scripts/test installs it with apt-get as root)")
    port = port or free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return RedisServer(port, proc, workdir)
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


def make_settings(tmp_path: Path, **overrides: object) -> Settings:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTIWIRE_")}
    return load_settings(env, data_dir=tmp_path, secret_key="test-secret-" + "x" * 32, **overrides)


@dataclass
class RunningServer:
    """A ctiwire server listening on loopback in the test's event loop."""

    url: str
    ctx: AppContext
    free_key: str
    pro_key: str
    http: HTTPServer

    def client(self, key: str | None = None, **kwargs: object) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=30, **kwargs)  # type: ignore[arg-type]


async def start_server(settings: Settings) -> RunningServer:
    ctx = await build_context(settings)
    keys = {}
    for tier in ("free", "pro"):
        email = f"{tier}@test.local"
        await accounts.create_user(ctx.store, email, tier)
        keys[tier] = (await accounts.create_key(ctx.store, email, "main")).secret
    port = free_port()
    http = HTTPServer(make_app(ctx))
    http.listen(port, "127.0.0.1")
    return RunningServer(f"http://127.0.0.1:{port}", ctx, keys["free"], keys["pro"], http)


async def stop_server(server: RunningServer) -> None:
    server.http.stop()
    await server.http.close_all_connections()
    await close_context(server.ctx)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    running = await start_server(make_settings(tmp_path))
    yield running
    await stop_server(running)
