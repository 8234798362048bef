"""A full disk (a small tmpfs under the SQLite database): writes answer 503 and change nothing, reads keep
being served, and everything recovers when space is back (issue 16)."""

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
from support import cli_env, ctiwire, spawn_server

pytestmark = pytest.mark.slow  # a tmpfs and a server process


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(path: Path) -> None:
    with open(path, "wb") as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
                os.fsync(filler.fileno())
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def _sign_up(base: str, email: str) -> httpx.Response:
    with httpx.Client(base_url=base, follow_redirects=False, timeout=30) as client:
        token = re.search(r'name="_xsrf" value="([^"]+)"', client.get("/account/signup").text)
        assert token
        return client.post("/account/signup", data={"email": email, "password": "a long password here",
                                                    "_xsrf": token.group(1)})


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
