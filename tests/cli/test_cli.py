"""The CLI as a person uses it: users, keys, serve and its clean stop; the production compose file."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess

import httpx
import pytest
from support import REPO, cli_env, ctiwire, spawn_server

pytestmark = pytest.mark.slow  # every test runs the CLI as processes


def test_users_and_keys_lifecycle(tmp_path) -> None:
    env = cli_env(tmp_path)
    assert "created user" in ctiwire(env, "users", "create", "ana@corp.example", "--tier", "free")
    created = ctiwire(env, "keys", "create", "ana@corp.example", "--name", "siem", "--scopes", "read:iocs")
    secret = created.strip().splitlines()[-1]
    assert secret.startswith("sk_live_") and len(secret) >= 8 + 43
    listing = ctiwire(env, "keys", "list", "ana@corp.example")
    assert "siem" in listing and "read:iocs" in listing and secret not in listing and secret[:16] not in listing
    ctiwire(env, "keys", "deactivate", "ana@corp.example", "siem")
    listing = ctiwire(env, "keys", "list", "ana@corp.example").splitlines()
    assert listing[0].split("\t") == ["name", "prefix", "state", "scopes", "created", "expires", "last used"]
    assert listing[1].split("\t")[2] == "deactivated"
    ctiwire(env, "keys", "delete", "ana@corp.example", "siem")
    assert "siem" not in ctiwire(env, "keys", "list", "ana@corp.example")


def test_clear_errors_without_tracebacks(tmp_path) -> None:
    env = cli_env(tmp_path)
    ctiwire(env, "users", "create", "bo@corp.example", "--tier", "free")
    for n in range(3):
        ctiwire(env, "keys", "create", "bo@corp.example", "--name", f"k{n}")
    cases = [
        (["keys", "create", "bo@corp.example", "--name", "k4"], "at most 3"),
        (["keys", "create", "bo@corp.example", "--name", "x", "--scopes", "read:misp"], "does not include"),
        (["users", "create", "bo@corp.example", "--tier", "pro"], "exists"),
        (["keys", "delete", "nobody@corp.example", "k1"], "no user"),
        (["keys", "create", "bo@corp.example", "--name", "z", "--expires-in-days", "0"], "must be 1 or more"),
        (["keys", "create", "bo@corp.example", "--name", "z", "--expires-in-days", "-3"], "must be 1 or more"),
    ]
    for args, message in cases:
        done = subprocess.run([str(REPO / ".venv/bin/ctiwire"), *args], env=env, capture_output=True, text=True)
        assert done.returncode == 1, done
        assert message in done.stderr and "Traceback" not in done.stderr


def test_serve_prints_demo_keys_and_stops_on_sigterm(tmp_path) -> None:
    env = cli_env(tmp_path)
    server = spawn_server(env, "--no-seed")
    demo = json.loads((tmp_path / "demo-keys.json").read_text())
    keys = {tier: demo[tier] for tier in ("free", "pro")}
    assert set(demo) == {"free", "pro", "accounts"} and all(v.startswith("sk_live_") for v in keys.values())
    assert (tmp_path / "demo-keys.json").stat().st_mode & 0o077 == 0
    response = httpx.get(server.url + "/api/v1/iocs", headers={"X-API-Key": keys["pro"]})
    assert response.status_code == 200
    assert _signs_in(server.url, demo["accounts"]["pro"])  # the printed account opens the web
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=20) == 0
    out = server.process.stdout.read() if server.process.stdout else ""
    assert keys["free"] in out and keys["pro"] in out
    assert demo["accounts"]["free"]["password"] in out and demo["accounts"]["pro"]["email"] in out
    again = spawn_server(env, "--no-seed")  # a restart keeps the same valid demo keys and accounts
    try:
        assert json.loads((tmp_path / "demo-keys.json").read_text()) == demo
    finally:
        again.process.send_signal(signal.SIGINT)
        assert again.process.wait(timeout=20) == 0
    out = again.process.stdout.read() if again.process.stdout else ""
    assert demo["accounts"]["free"]["password"] not in out  # printed once, at first start


def _signs_in(url: str, account: dict[str, str]) -> bool:
    with httpx.Client(base_url=url, follow_redirects=False) as client:
        token = re.search(r'name="_xsrf" value="([^"]+)"', client.get("/account/signin").text)
        assert token
        done = client.post("/account/signin", data={**account, "_xsrf": token.group(1)})
        return done.status_code == 302 and client.get("/account/keys").status_code == 200


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="Debian's docker-compose is not installed")
def test_production_compose_file_is_valid() -> None:
    env = {"CTIWIRE_SECRET_KEY": "x" * 32, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["docker-compose", "-f", str(REPO / "docker-compose.yml"), "config", "-q"], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rendered = subprocess.run(["docker-compose", "-f", str(REPO / "docker-compose.yml"), "config"], env=env,
                              capture_output=True, text=True, check=True).stdout
    for service in ("mongodb:", "redis:", "api:", "worker:", "beat:", "healthcheck:", "CTIWIRE_REDIS_URL"):
        assert service in rendered
    missing = subprocess.run(["docker-compose", "-f", str(REPO / "docker-compose.yml"), "config", "-q"],
                             env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
    assert missing.returncode != 0 and "CTIWIRE_SECRET_KEY" in missing.stderr


def test_a_busy_port_is_one_clear_line_and_exit_2(tmp_path) -> None:
    import socket as sockets

    with sockets.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = cli_env(tmp_path, CTIWIRE_HOST="127.0.0.1")
        for extra in ({}, {"CTIWIRE_PROCESSES": "2"}):
            done = subprocess.run([str(REPO / ".venv/bin/ctiwire"), "serve", "--no-seed", "--port", str(port)],
                                  env={**env, **extra}, capture_output=True, text=True, timeout=60)
            assert done.returncode == 2, done
            assert done.stderr.strip() == (f"ctiwire: port {port} on 127.0.0.1 is already in use; choose another "
                                           "with --port N or CTIWIRE_PORT=N")
