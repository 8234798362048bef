"""The demo accounts (cli/bootstrap.py): made by the embedded default's first start or by
``ctiwire seed --demo`` only; no start recreates, reactivates or prints what an operator removed."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import httpx
import pytest
from support import RedisServer, ServerProcess, cli_env, ctiwire, spawn_server

SECRET = re.compile(r"sk_live_\w+")


def _banner(server: ServerProcess) -> str:
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=30) == 0
    return server.process.stdout.read() if server.process.stdout else ""


def _remove_demo(env: dict[str, str]) -> None:
    ctiwire(env, "users", "delete", "demo-pro@ctiwire.local")
    ctiwire(env, "keys", "deactivate", "demo-free@ctiwire.local", "demo")


def _assert_removed_stay_removed(env: dict[str, str], demo: dict, banner: str) -> None:
    assert not SECRET.search(banner), banner
    assert all(demo["accounts"][tier]["password"] not in banner for tier in ("free", "pro")), banner
    users = ctiwire(env, "users", "list")
    assert "demo-pro@ctiwire.local" not in users and "demo-free@ctiwire.local" in users
    assert "\tdeactivated\t" in ctiwire(env, "keys", "list", "demo-free@ctiwire.local")


def _start_after_removal(env: dict[str, str], demo: dict) -> str:
    """``ctiwire serve`` once the demo accounts were removed: neither old key works; its banner."""
    server = spawn_server(env, "--no-seed")
    try:
        assert _answer(server, demo["free"]) == (401, "expired_api_key")
        assert _answer(server, demo["pro"]) == (401, "expired_api_key")
    finally:
        banner = _banner(server)
    _assert_removed_stay_removed(env, demo, banner)
    return banner


def _answer(server: ServerProcess, key: str) -> tuple[int, str]:
    response = httpx.get(server.url + "/api/v1/iocs", headers={"X-API-Key": key})
    return response.status_code, response.json().get("error", {}).get("code", "") if response.status_code != 200 else ""


@pytest.mark.redis
@pytest.mark.slow  # server processes, a real redis-server
def test_a_production_start_never_makes_nor_prints_demo_accounts(tmp_path: Path, redis_server: RedisServer) -> None:
    import redis

    redis.Redis.from_url(redis_server.url).flushall()
    env = cli_env(tmp_path, CTIWIRE_REDIS_URL=redis_server.url)
    made = ctiwire(env, "seed", "--demo", "--articles", "20")
    assert "created the demo accounts" in made and str(tmp_path / "demo-keys.json") in made
    assert not SECRET.search(made)
    demo = json.loads((tmp_path / "demo-keys.json").read_text())
    _remove_demo(env)
    banner = _start_after_removal(env, demo)
    assert "demo" not in banner.lower()
    ctiwire(env, "seed", "--demo", "--articles", "1")  # on purpose: both made again, with new secrets
    again = json.loads((tmp_path / "demo-keys.json").read_text())
    assert again["free"] != demo["free"] and "demo-pro@ctiwire.local" in ctiwire(env, "users", "list")
    assert "\tactive\t" in ctiwire(env, "keys", "list", "demo-pro@ctiwire.local")


@pytest.mark.slow  # server processes
def test_a_later_embedded_start_keeps_what_an_operator_removed(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    first = spawn_server(env, "--no-seed")
    demo = json.loads((tmp_path / "demo-keys.json").read_text())
    assert demo["pro"] in _banner(first)
    _remove_demo(env)
    banner = _start_after_removal(env, demo)
    assert "demo Free key: deactivated by an operator" in banner
    assert "demo Pro key: deleted by an operator" in banner and "demo-pro@ctiwire.local deleted" in banner
    assert json.loads((tmp_path / "demo-keys.json").read_text()) == demo
