"""A running server holding the demo dataset; the same rows regenerated in memory are the test oracle."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from support import RunningServer, make_settings, start_server, stop_server

from ingest.demo import generate, seed_store
from store.records import Article, utcnow

SEEDED_ROWS = 800


@dataclass
class Seeded:
    server: RunningServer
    rows: list[Article]

    def visible(self, days: int = 365, archived: bool = False) -> list[Article]:
        """The rows a tier with ``days`` of lookback may see (the oracle of every list test)."""
        floor = utcnow() - timedelta(days=days)
        return [a for a in self.rows if a.published_at >= floor and (archived or not a.is_archived)]


@pytest.fixture
async def seeded(tmp_path: Path) -> AsyncIterator[Seeded]:
    # Scaled limits: these tests send more than a Free key's 10 requests per minute.
    running = await start_server(make_settings(tmp_path, rate_limit_scale=100))
    now = utcnow()
    await seed_store(running.ctx.store, SEEDED_ROWS, now=now)
    yield Seeded(running, [a for batch in generate(SEEDED_ROWS, now) for a in batch])
    await stop_server(running)
