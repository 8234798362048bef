"""What every handler is given through ``initialize`` (tornado demos/blog: no module-level globals)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from config.settings import Settings
from server.ratelimit import RateLimiter
from store.cache import Cache
from store.ports import AccountStore, ArticleStore, IocStore, SourceStore, Stores
from store.records import utcnow


@dataclass(slots=True)
class AppContext:
    """The service's dependencies, built once at start-up by ``application.app.build_context``."""

    settings: Settings
    stores: Stores
    cache: Cache
    limiter: RateLimiter
    started_at: str = field(default_factory=lambda: utcnow().isoformat())
    extras: dict[str, Any] = field(default_factory=dict)

    # Each handler names the concern it reads (store.ports); ``stores`` opens, closes and probes them together.
    @property
    def articles(self) -> ArticleStore:
        return self.stores.articles

    @property
    def iocs(self) -> IocStore:
        return self.stores.iocs

    @property
    def sources(self) -> SourceStore:
        return self.stores.sources

    @property
    def accounts(self) -> AccountStore:
        return self.stores.accounts
