"""What every handler is given through ``initialize`` (tornado demos/blog: no module-level globals)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from config.settings import Settings
from server.ratelimit import RateLimiter
from store.base import Store
from store.cache import Cache
from store.records import utcnow


@dataclass(slots=True)
class AppContext:
    """The service's dependencies, built once at start-up by ``application.app.build_context``."""

    settings: Settings
    store: Store
    cache: Cache
    limiter: RateLimiter
    started_at: str = field(default_factory=lambda: utcnow().isoformat())
    extras: dict[str, Any] = field(default_factory=dict)
