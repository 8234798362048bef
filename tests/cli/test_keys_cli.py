"""``ctiwire keys list|rotate|rename|scopes`` as an operator uses them, against a running ``ctiwire serve``:
the list shows last use; a rotation prints the new secret once and the old one follows the chosen grace."""

from __future__ import annotations

import subprocess

import httpx
import pytest
from support import VENV_BIN, cli_env, ctiwire, spawn_server

pytestmark = pytest.mark.slow  # every test runs the CLI as processes

EMAIL = "ana@corp.example"


def _secret(out: str) -> str:
    [secret] = [line for line in out.splitlines() if line.startswith("sk_live_")]
    return secret


def _rows(env: dict[str, str]) -> dict[str, list[str]]:
    lines = ctiwire(env, "keys", "list", EMAIL).splitlines()
    assert lines[0].split("\t") == ["name", "prefix", "state", "scopes", "created", "expires", "last used"]
    return {line.split("\t")[0]: line.split("\t") for line in lines[1:]}


def test_list_shows_last_use_and_rotation_follows_the_grace(tmp_path) -> None:
    env = cli_env(tmp_path)
    ctiwire(env, "users", "create", EMAIL, "--tier", "pro")
    old = _secret(ctiwire(env, "keys", "create", EMAIL, "--name", "siem"))
    ctiwire(env, "keys", "create", EMAIL, "--name", "soon", "--expires-in-days", "3")
    rows = _rows(env)
    assert rows["siem"][6] == "never" and rows["soon"][5].endswith("(expires within 7 days)")
    server = spawn_server(env, "--no-seed")
    try:
        def status(secret: str) -> tuple[int, str | None]:
            answer = httpx.get(server.url + "/api/v1/iocs", headers={"X-API-Key": secret}, timeout=30)
            return answer.status_code, None if answer.status_code == 200 else answer.json()["error"]["code"]

        assert status(old) == (200, None)
        assert _rows(env)["siem"][6].startswith("20")  # an ISO 8601 moment, no longer "never"
        rotated = ctiwire(env, "keys", "rotate", EMAIL, "siem", "--grace", "1h")
        new = _secret(rotated)
        assert "the old secret works until" in rotated and new != old
        assert status(old) == (200, None) and status(new) == (200, None)
        newest = _secret(ctiwire(env, "keys", "rotate", EMAIL, "siem"))  # default grace: none
        assert status(new) == (401, "expired_api_key") and status(newest) == (200, None)
        assert status(old) == (401, "expired_api_key")
    finally:
        server.stop()
    assert old not in ctiwire(env, "keys", "list", EMAIL) and newest[:12] in ctiwire(env, "keys", "list", EMAIL)


def test_rename_and_scopes(tmp_path) -> None:
    env = cli_env(tmp_path)
    ctiwire(env, "users", "create", EMAIL)
    ctiwire(env, "keys", "create", EMAIL, "--name", "siem")
    assert "now named 'siem-prod'" in ctiwire(env, "keys", "rename", EMAIL, "siem", "siem-prod")
    assert "now has scopes read:iocs" in ctiwire(env, "keys", "scopes", EMAIL, "siem-prod", "read:iocs")
    assert _rows(env)["siem-prod"][3] == "read:iocs"
    for args, message in ((["scopes", EMAIL, "siem-prod", "read:misp"], "does not include"),
                          (["rename", EMAIL, "nope", "x"], "no key named"),
                          (["rotate", EMAIL, "siem-prod", "--grace", "2h"], "invalid choice")):
        done = subprocess.run([str(VENV_BIN / "ctiwire"), "keys", *args], env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr, args
