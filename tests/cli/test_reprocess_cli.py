"""``ctiwire enrich --reprocess`` as an operator runs it after a rules update."""

from __future__ import annotations

import sqlite3
import subprocess

import pytest
from support import VENV_BIN, cli_env, ctiwire

pytestmark = pytest.mark.slow  # runs the CLI as processes


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "ctiwire"), *args], env=env, capture_output=True, text=True, timeout=300)


def test_reprocess_rewrites_the_demo_data_once_with_a_progress_bar(tmp_path) -> None:
    env = cli_env(tmp_path)
    ctiwire(env, "seed", "--articles", "300")
    first = run(env, "enrich", "--reprocess")
    assert first.returncode == 0, first.stderr
    assert "re-enriching stored articles" in first.stderr and "300/300" in first.stderr
    assert "300 articles re-enriched" in first.stderr
    with sqlite3.connect(tmp_path / "ctiwire.sqlite3") as db:
        reasons = db.execute("SELECT doc FROM articles LIMIT 1").fetchone()[0]
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert b"rubric level" in bytes(reasons)  # the demo's synthetic scores were replaced by the rules' own
    second = run(env, "enrich", "--reprocess")
    assert second.returncode == 0 and "300 articles re-enriched, 0 changed" in second.stderr


def test_enrich_needs_files_or_reprocess_but_not_both(tmp_path) -> None:
    env = cli_env(tmp_path)
    for args in ((), ("--reprocess", str(tmp_path / "a.txt"))):
        done = run(env, "enrich", *args)
        assert done.returncode == 1 and "--reprocess" in done.stderr and "Traceback" not in done.stderr
