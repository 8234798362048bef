"""SQLite after a SIGKILL (issue 16): a writer killed in the middle of a bulk write (the seed, which
writes through the same upserts as ingestion) or of key creation leaves a database that opens with
``PRAGMA integrity_check`` ok and no half-written record."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import orjson
import pytest
from support import VENV_BIN, cli_env, ctiwire

pytestmark = pytest.mark.slow  # CLI processes killed mid-write


def _check(db_path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(db_path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return db


def test_a_bulk_write_killed_midway_leaves_whole_records(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    ctiwire(env, "seed", "--articles", "10")  # the schema exists: the kill lands in the bulk write
    proc = subprocess.Popen([str(VENV_BIN / "ctiwire"), "seed", "--articles", "30000"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    db = _check(tmp_path / "ctiwire.sqlite3")
    rows = db.execute("SELECT id, doc, list_json FROM articles").fetchall()
    assert 10 < len(rows) < 30000, "the kill did not land mid-write"
    for row_id, doc, listed in rows:  # every article is whole: its document and its list form agree
        assert orjson.loads(doc)["id"] == row_id and orjson.loads(listed)["id"] == row_id
    iocs = db.execute("SELECT type, value, doc FROM iocs").fetchall()
    assert all(orjson.loads(doc)["value"] == value for _, value, doc in iocs)
    db.close()
    assert "seeded" in ctiwire(env, "seed", "--articles", "50")  # and it keeps working


def test_key_creation_killed_at_any_moment_leaves_no_half_key(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    ctiwire(env, "users", "create", "ana@corp.example", "--tier", "pro")
    for n in range(12):
        proc = subprocess.Popen([str(VENV_BIN / "ctiwire"), "keys", "create", "ana@corp.example", "--name", f"k{n}"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.05 * n)  # from before the store opens to after the insert
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    db = _check(tmp_path / "ctiwire.sqlite3")
    keys = db.execute("SELECT name, key_hash, prefix, scopes FROM api_keys").fetchall()
    db.close()
    for name, key_hash, prefix, scopes in keys:
        assert len(key_hash) == 64 and prefix.startswith("sk_live_") and orjson.loads(scopes), name
    listing = ctiwire(env, "keys", "list", "ana@corp.example").splitlines()[1:]
    assert sorted(line.split("\t")[0] for line in listing) == sorted(name for name, *_ in keys)
