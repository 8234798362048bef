"""A full disk (a small tmpfs under the SQLite database): writes answer 503 and change nothing, reads keep
being served, and everything recovers when space is back."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support import VENV_BIN, ServerProcess, cli_env, ctiwire, spawn_server

pytestmark = pytest.mark.slow  # a tmpfs and a server process


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(path: Path) -> None:
    """Fill the disk holding ``path``; a disk already too full to create the file is full too."""
    try:
        with open(path, "wb") as filler:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
                os.fsync(filler.fileno())
    except OSError as exc:
        assert exc.errno == errno.ENOSPC


def _post_form(client: httpx.Client, path: str, form: str, data: dict[str, str]) -> httpx.Response:
    """POST ``data`` to ``path`` with the CSRF token of the page ``form``."""
    token = re.search(r'name="_xsrf" value="([^"]+)"', client.get(form).text)
    assert token
    return client.post(path, data={**data, "_xsrf": token.group(1)})


def _sign_up(base: str, email: str) -> httpx.Response:
    with httpx.Client(base_url=base, follow_redirects=False, timeout=30) as client:
        return _post_form(client, "/account/signup", "/account/signup",
                          {"email": email, "password": "a long password here"})


def _signed_in(base: str, email: str) -> httpx.Client:
    """A client signed in to a new account (sign-up, then sign-in: sign-up alone does not sign in)."""
    assert _sign_up(base, email).status_code == 302
    client = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
    answer = _post_form(client, "/account/signin", "/account/signin",
                        {"email": email, "password": "a long password here"})
    assert answer.status_code == 302 and client.get("/account/keys").status_code == 200
    return client


def _sign_out(client: httpx.Client) -> httpx.Response:
    return _post_form(client, "/account/signout", "/account/keys", {})


def test_a_cli_write_on_a_full_disk_fails_in_one_clear_line(small_disk: Path) -> None:
    env = cli_env(small_disk / "data")
    ctiwire(env, "users", "create", "before@corp.example")
    _fill(small_disk / "filler")
    for args in (["users", "create", "during@corp.example"], ["keys", "create", "before@corp.example", "--name", "k"],
                 ["seed", "--articles", "50"]):
        done = subprocess.run([str(VENV_BIN / "ctiwire"), *args], env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 1, done
        lines = [line for line in done.stderr.splitlines() if line.startswith("ctiwire:")]
        assert lines == ["ctiwire: error: the store is unavailable: SQLite: database or disk is full"], done.stderr
        assert "Traceback" not in done.stderr and "cannot rollback" not in done.stderr
    (small_disk / "filler").unlink()
    assert "during@" not in ctiwire(env, "users", "list")


def test_sign_out_on_a_full_disk_signs_this_browser_out_and_says_the_session_lives_on(small_disk: Path) -> None:
    env = cli_env(small_disk / "data")
    server = spawn_server(env, "--no-seed")
    try:
        client = _signed_in(server.url, "ana@corp.example")
        cookie = client.cookies.get("ctiwire_session")
        assert cookie
        _fill(small_disk / "filler")
        assert _sign_up(server.url, "during@corp.example").status_code == 503
        answer = _sign_out(client)
        assert answer.status_code == 503, answer.text
        assert "signed out in this browser" in answer.text and "could not end your session" in answer.text
        assert client.cookies.get("ctiwire_session") is None  # the browser's cookie is gone
        assert client.get("/account/keys").status_code == 302
    finally:
        (small_disk / "filler").unlink(missing_ok=True)
        stderr = _stop(server)
    assert "Traceback" not in stderr and "ERROR" not in stderr, stderr
    assert "WARNING" in stderr and "database or disk is full" in stderr


def _stop(server: ServerProcess) -> str:
    server.stop()
    return server.process.stderr.read() if server.process.stderr else ""


def test_a_full_disk_refuses_writes_and_keeps_serving_reads(small_disk: Path) -> None:
    env = cli_env(small_disk / "data")
    ctiwire(env, "seed", "--articles", "200")
    server = spawn_server(env, "--no-seed")
    try:
        key = json.loads((small_disk / "data" / "demo-keys.json").read_text())["pro"]
        assert _sign_up(server.url, "before@corp.example").status_code == 302
        _fill(small_disk / "filler")
        refused = _sign_up(server.url, "during@corp.example")
        assert refused.status_code == 503 and "nothing was changed" in refused.text
        for _ in range(3):
            page = httpx.get(server.url + "/api/v1/articles", params={"limit": 5}, headers={"X-API-Key": key})
            assert page.status_code == 200 and len(page.json()["data"]) == 5
        (small_disk / "filler").unlink()
        assert _sign_up(server.url, "after@corp.example").status_code == 302  # recovered without a restart
    finally:
        server.stop()
    users = ctiwire(env, "users", "list")
    assert "before@corp.example" in users and "after@corp.example" in users and "during@" not in users
    check = subprocess.run(["python3", "-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1])"
                            ".execute('PRAGMA integrity_check').fetchone()[0])",
                            str(small_disk / "data" / "ctiwire.sqlite3")], capture_output=True, text=True)
    assert check.stdout.strip() == "ok"
