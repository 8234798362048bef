"""What the repository tracks: no databases, key files, caches, nor large files outside the bench data; and
no source that narrates history.

A tracked database or key file publishes secrets (hashed keys, demo passwords) to everyone who clones. A comment
says why the code is as it is; which issue or stop brought it belongs in the commit message, and its timings in
BENCHMARKS.md.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 1_000_000
BENCH_DATA = ("bench/",)
DATABASE_SUFFIXES = {".sqlite", ".sqlite3", ".db"}
KEY_NAMES = {"demo-keys.json", "secret.key"}
KEY_SUFFIXES = {".key", ".pem"}
CACHE_FOLDERS = {".schemathesis", ".pytest_cache", "__pycache__", ".mypy_cache", ".hypothesis", ".ruff_cache"}
SQLITE_MAGIC = b"SQLite format 3\x00"
SOURCE_SUFFIXES = {".py", ".html", ".js", ".css", ".sh", ".toml"}
# The words issue(s) or stop and a number: this project's history. Another project's "#4246" is a reason and passes.
HISTORY = re.compile(r"(?<![\w-])(?:issues?|stop)\s+[0-9]+", re.IGNORECASE)


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: there is no list of tracked files to check")
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [name for name in listing.stdout.decode().split("\0") if name]


def _problem(name: str) -> str | None:
    path = PurePosixPath(name)
    if CACHE_FOLDERS.intersection(path.parts[:-1]):
        return "a cache"
    if path.name in KEY_NAMES or path.suffix in KEY_SUFFIXES:
        return "a key file"
    local = ROOT / name
    if not local.is_file():  # deleted in the worktree but still tracked: judged by its name only
        return "a database" if path.suffix in DATABASE_SUFFIXES else None
    with local.open("rb") as handle:
        if path.suffix in DATABASE_SUFFIXES or handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC:
            return "a database"
    if local.stat().st_size > MAX_BYTES and not name.startswith(BENCH_DATA):
        return f"larger than {MAX_BYTES} bytes outside the bench data"
    return None


def test_no_database_key_file_cache_or_large_file_is_tracked() -> None:
    found = {name: problem for name in _tracked() if (problem := _problem(name))}
    assert found == {}, f"tracked files that must not be in the repository: {found}"


def _history(name: str) -> list[str]:
    path = ROOT / name
    if path.suffix not in SOURCE_SUFFIXES or name.startswith(BENCH_DATA) or not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [f"{name}:{number}: {line.strip()}" for number, line in enumerate(lines, 1) if HISTORY.search(line)]


def test_history_pattern_refuses_issue_and_stop_numbers_only() -> None:
    pairs = [("(issue", "14)"), ("Issue", "17: a repeat"), ("(issues", "3 and 8)"), ("stop", "4"), ("ISSUES", "12")]
    refused = [" ".join(pair) for pair in pairs]  # joined here, so that this file holds no reference itself
    allowed = ["OpenCTI #4246", "an issue with 3 parts", "the issuer 12", "non-stop 24/7", "tissue 5x", "issue #12"]
    assert [text for text in refused if not HISTORY.search(text)] == []
    assert [text for text in allowed if HISTORY.search(text)] == []


def test_no_source_cites_issue_or_stop_numbers() -> None:
    found = [line for name in _tracked() for line in _history(name)]
    assert found == [], "history references (say why, or cite the spec section, instead):\n" + "\n".join(found)
