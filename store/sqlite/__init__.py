"""The embedded backend: one SQLite file in WAL mode with an FTS5 index on title and summary."""

from store.sqlite.backend import SqliteStore

__all__ = ["SqliteStore"]
