"""What every handler is given through ``initialize`` (tornado demos/blog: no module-level globals)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from config.settings import Settings
from server.ratelimit import RateLimiter
from store.base import Store
from store.cache import Cache, NearMap
from store.records import utcnow

PAGE_ENTRIES = 128


@dataclass(slots=True)
class AppContext:
    """The service's dependencies, built once at start-up by ``application.app.build_context``."""

    settings: Settings
    store: Store
    cache: Cache
    limiter: RateLimiter
    started_at: str = field(default_factory=lambda: utcnow().isoformat())
    extras: dict[str, Any] = field(default_factory=dict)
    # Small IOC list pages and their ETags by (data version, query) (server.iocs.write_ioc_list); ~10 MB at most.
    pages: NearMap[tuple[bytes, str]] = field(default_factory=lambda: NearMap(PAGE_ENTRIES))
