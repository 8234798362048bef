"""The storage seam, one interface per concern (medallion's backend seam, without HTTP concerns or paging).

``ArticleStore``, ``IocStore``, ``SourceStore``, ``FeedStore``, ``WebhookStore``, ``AllowlistStore``,
``SightingStore``, ``ContextStore`` and
``AccountStore`` (itself
``UserStore``, ``KeyStore``, ``SessionStore``, ``TokenStore`` and ``AttemptStore``)
each declare one method per operation;
``Lifecycle`` opens, closes and probes the connection they share. A backend (``store.sqlite``, ``store.mongo``)
implements every concern with the same behaviour, and ``tests/conformance`` runs each concern's suite on each backend.
``Stores`` bundles one backend's parts; callers hold only the concerns they use.

``EventLog`` is the append-only log of changes the live feed reads: the SQLite backend's events table, or
Redis Streams when Redis is configured (``store.factory``); a bundle made without either keeps its events in
its own process (``store.memory_events``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from store.ports.accounts import AccountStore, AttemptStore, KeyStore, SessionStore, TokenStore, UserStore
from store.ports.allowlist import AllowlistStore
from store.ports.articles import ArticleStore
from store.ports.context import ContextStore
from store.ports.events import EventLog
from store.ports.feeds import FeedStore
from store.ports.iocs import IocStore
from store.ports.lifecycle import Lifecycle, Versioned
from store.ports.sightings import SightingStore
from store.ports.sources import SourceStore
from store.ports.webhooks import WebhookStore

__all__ = [
    "AccountStore",
    "AllowlistStore",
    "ArticleStore",
    "AttemptStore",
    "ContextStore",
    "EventLog",
    "FeedStore",
    "IocStore",
    "KeyStore",
    "Lifecycle",
    "SessionStore",
    "SightingStore",
    "SourceStore",
    "Stores",
    "TokenStore",
    "UserStore",
    "Versioned",
    "WebhookStore",
]


def _in_process_log() -> EventLog:
    from store.memory_events import MemoryEventLog  # it builds on this package

    return MemoryEventLog()


@dataclass(frozen=True, slots=True)
class Stores:
    """One backend's concerns, opened and closed together (``store.factory.make_stores``)."""

    lifecycle: Lifecycle
    articles: ArticleStore
    iocs: IocStore
    sources: SourceStore
    accounts: AccountStore
    feeds: FeedStore
    webhooks: WebhookStore
    sightings: SightingStore
    allowlist: AllowlistStore
    context: ContextStore
    events: EventLog = field(default_factory=_in_process_log)

    @property
    def name(self) -> str:
        return self.lifecycle.name

    async def open(self) -> None:
        await self.lifecycle.open()
        await self.events.open()

    async def close(self) -> None:
        await self.events.close()
        await self.lifecycle.close()

    async def ping(self) -> dict[str, Any]:
        return await self.lifecycle.ping()
