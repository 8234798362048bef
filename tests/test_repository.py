"""What the repository tracks: no databases, key files, caches, nor large files outside the bench data.

A tracked database or key file publishes secrets (hashed keys, demo passwords) to everyone who clones.
"""

from __future__ import annotations

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
