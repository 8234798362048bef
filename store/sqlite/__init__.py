"""The embedded backend: one SQLite file in WAL mode with an FTS5 index on title and summary."""

from datetime import timedelta
from pathlib import Path

from store.ports import Stores
from store.ports.events import DEFAULT_RETENTION
from store.sqlite.accounts import SqliteAccounts
from store.sqlite.allowlist import SqliteAllowlist
from store.sqlite.articles import SqliteArticles
from store.sqlite.backend import BULK_CACHE_MIB, SqliteStore
from store.sqlite.events import SqliteEventLog
from store.sqlite.feeds import SqliteFeeds
from store.sqlite.iocs import SqliteIocs
from store.sqlite.sightings import SqliteSightings
from store.sqlite.sources import SqliteSources
from store.sqlite.stix_context import SqliteContext
from store.sqlite.webhooks import SqliteWebhooks

__all__ = [
    "SqliteAccounts",
    "SqliteArticles",
    "SqliteEventLog",
    "SqliteAllowlist",
    "SqliteFeeds",
    "SqliteIocs",
    "SqliteSightings",
    "SqliteSources",
    "SqliteStore",
    "SqliteWebhooks",
    "sqlite_stores",
]


def sqlite_stores(path: Path, retention: timedelta = DEFAULT_RETENTION, bulk_cache_mib: int = BULK_CACHE_MIB) -> Stores:
    """Every concern on the SQLite file at ``path``, sharing one ``SqliteStore`` (not yet opened)."""
    conn = SqliteStore(path, bulk_cache_mib)
    return Stores(
        conn,
        SqliteArticles(conn),
        SqliteIocs(conn),
        SqliteSources(conn),
        SqliteAccounts(conn),
        SqliteFeeds(conn),
        SqliteWebhooks(conn),
        SqliteSightings(conn),
        SqliteAllowlist(conn),
        SqliteContext(conn),
        SqliteEventLog(conn, retention),
    )
