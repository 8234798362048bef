"""Helpers shared by the test folders (importable as ``support``: pytest adds tests/ to sys.path)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from tornado.httpserver import HTTPServer

from application.app import build_context, close_context, make_app
from application.http import make_server
from config.settings import Settings, load_settings
from server.context import AppContext
from store import accounts
from store.ports import Stores

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


def make_settings(tmp_path: Path, **overrides: object) -> Settings:
    # The trained ATT&CK classifier's cache (set for the session by conftest) is shared, not dropped.
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTIWIRE_") or k == "CTIWIRE_MODEL_DIR"}
    # Webhook receivers in the tests listen on 127.0.0.1 (CTIWIRE_WEBHOOK_ALLOW_PRIVATE=1).
    overrides = {"webhook_allow_private": True, **overrides}
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


async def start_server(settings: Settings, stores: Stores | None = None) -> RunningServer:
    """A server on ``settings`` (and on ``stores`` when given, e.g. MongoDB over mongomock)."""
    port = free_port()
    settings = settings.replace(host="127.0.0.1", port=port)  # the listening address names the API's links
    ctx = await build_context(settings, stores)
    keys = {}
    for tier in ("free", "pro"):
        email = f"{tier}@test.local"
        await accounts.create_user(ctx.accounts, email, tier)
        keys[tier] = (await delivered_key(ctx.accounts, email, "main")).secret
    http = make_server(make_app(ctx), settings.trusted_proxies)
    http.listen(port, "127.0.0.1")
    return RunningServer(f"http://127.0.0.1:{port}", ctx, keys["free"], keys["pro"], http)


async def stop_server(server: RunningServer) -> None:
    server.http.stop()
    await server.http.close_all_connections()
    await close_context(server.ctx)


VENV_BIN = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin"


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """Environment for a ctiwire subprocess on ``data_dir`` (CTIWIRE_* of the caller dropped)."""
    # The trained ATT&CK classifier's cache (set for the session by conftest) is shared, not dropped.
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTIWIRE_") or k == "CTIWIRE_MODEL_DIR"}
    env.update({"CTIWIRE_DATA_DIR": str(data_dir), "CTIWIRE_SECRET_KEY": "test-secret-" + "y" * 32,
                "CTIWIRE_LOG_LEVEL": "WARNING", **extra})
    return env


def ctiwire(env: dict[str, str], *args: str, timeout: float = 120) -> str:
    """Run the CLI and return its stdout (raises with stderr on failure)."""
    done = subprocess.run([str(VENV_BIN / "ctiwire"), *args], env=env, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"ctiwire {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


@dataclass
class ServerProcess:
    url: str
    process: subprocess.Popen[str]

    def stop(self) -> int:
        self.process.terminate()
        return self.process.wait(timeout=20)


def spawn_server(env: dict[str, str], *args: str) -> ServerProcess:
    """``ctiwire serve`` as a subprocess on a free port; returns once /healthz answers."""
    port = free_port()
    proc = subprocess.Popen([str(VENV_BIN / "ctiwire"), "serve", "--port", str(port), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"ctiwire serve exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return ServerProcess(url, proc)
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("ctiwire serve did not answer /healthz in time")


def wait_for(predicate, timeout: float, what: str, env: Any = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}\n{env.log()[-4000:] if env else ''}")


async def delivered_key(store: Any, email: str, name: str, *args: Any, **kwargs: Any) -> Any:
    """A key as a client holds it: created, and its secret handed out (so it authenticates)."""
    from store import accounts

    new = await accounts.create_key(store, email, name, *args, **kwargs)
    await accounts.deliver_key(store, new)
    return new
