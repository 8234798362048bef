"""A running server holding the demo dataset, on every backend; the same rows regenerated in memory are
the test oracle. ``sqlite`` and ``mongomock`` always run; ``mongodb`` with CTIWIRE_TEST_MONGODB_URI."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
import pytest_asyncio
from mongo_support import NO_TEXT_ON_MOCK, backend_stores, server_backends
from support import RunningServer, make_settings, start_server, stop_server

from ingest.demo import generate, seed_store
from store.mongo import MongoStore
from store.records import Article, utcnow

SEEDED_ROWS = 800
BACKENDS = server_backends()


@dataclass
class Seeded:
    server: RunningServer
    rows: list[Article]
    backend: str

    def visible(self, days: int = 365, archived: bool = False) -> list[Article]:
        """The rows a tier with ``days`` of lookback may see (the oracle of every list test)."""
        floor = utcnow() - timedelta(days=days)
        return [a for a in self.rows if a.published_at >= floor and (archived or not a.is_archived)]

    def needs_text_index(self) -> None:
        if self.backend == "mongomock":
            pytest.skip(NO_TEXT_ON_MOCK)


async def _seeded(backend: str, tmp_path: Path) -> AsyncIterator[Seeded]:
    # Scaled limits: these tests send more than a Free key's 10 requests per minute.
    running = await start_server(make_settings(tmp_path, rate_limit_scale=100), backend_stores(backend))
    now = utcnow()
    await seed_store(running.ctx.stores, SEEDED_ROWS, now=now)
    yield Seeded(running, [a for batch in generate(SEEDED_ROWS, now) for a in batch], backend)
    if isinstance(running.ctx.stores.lifecycle, MongoStore):
        await running.ctx.stores.lifecycle.client.drop_database(running.ctx.stores.lifecycle.db_name)
    await stop_server(running)


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=BACKENDS)
async def seeded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Seeded]:
    """Seeded once per test module and backend: the tests using it only read."""
    async for value in _seeded(request.param, tmp_path_factory.mktemp("articles")):
        yield value


# mongomock deep-copies every document on every query, so the tests that write thousands of rows
# during a request run on SQLite and on a real MongoDB (CTIWIRE_TEST_MONGODB_URI), not on the mock.
WRITING_BACKENDS = [b for b in BACKENDS if b.values[0] != "mongomock"]


@pytest.fixture(params=WRITING_BACKENDS)
async def writable(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Seeded]:
    """A server of its own, for tests that write while they read."""
    async for value in _seeded(request.param, tmp_path):
        yield value
