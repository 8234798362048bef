"""Fixtures shared by every test folder: a real redis-server, a running ctiwire server, an open SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from support import RedisServer, RunningServer, make_settings, start_redis, start_server, stop_server

from store.sqlite import SqliteStore


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[RunningServer]:
    running = await start_server(make_settings(tmp_path))
    yield running
    await stop_server(running)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    """An open SQLite store in the test's own folder (tests/conformance overrides it, once per backend)."""
    opened = SqliteStore(tmp_path / "ctiwire.sqlite3")
    await opened.open()
    yield opened
    await opened.close()
