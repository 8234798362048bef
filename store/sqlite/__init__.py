"""The embedded backend: one SQLite file in WAL mode with an FTS5 index on title and summary."""

from pathlib import Path

from store.ports import Stores
from store.sqlite.backend import SqliteStore

__all__ = ["SqliteStore", "sqlite_stores"]


def sqlite_stores(path: Path) -> Stores:
    """Every concern on the SQLite file at ``path`` (not yet opened)."""
    return Stores.of(SqliteStore(path))
