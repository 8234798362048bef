"""Fixtures shared by every test folder: a real redis-server, a running ctiwire server, an open SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from support import RedisServer, RunningServer, make_settings, start_redis, start_server, stop_server

from store.ports import Stores
from store.sqlite import sqlite_stores

# Hypothesis keeps no example database in the checkout (the tests never write into it).
settings.register_profile("ctiwire", database=None)
settings.load_profile("ctiwire")
CHECKOUT_DATA = Path(__file__).resolve().parent.parent / "var"


@pytest.fixture(scope="session", autouse=True)
def _nothing_written_into_the_checkout() -> Iterator[None]:
    """Fails the run when a test leaves a data dir in the checkout (a default CTIWIRE_DATA_DIR of ``var``)."""
    before = set(CHECKOUT_DATA.rglob("*")) if CHECKOUT_DATA.exists() else set()
    yield
    after = set(CHECKOUT_DATA.rglob("*")) if CHECKOUT_DATA.exists() else set()
    assert after <= before, f"tests wrote into the checkout: {sorted(map(str, after - before))}"


@pytest.fixture(scope="session", autouse=True)
def _model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The ATT&CK classifier is trained once per run into a temporary cache, never into the user's home."""
    patch = pytest.MonkeyPatch()
    patch.setenv("CTIWIRE_MODEL_DIR", str(tmp_path_factory.mktemp("models")))
    yield
    patch.undo()


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
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    """Open SQLite stores in the test's own folder (tests/conformance overrides it, once per backend)."""
    opened = sqlite_stores(tmp_path / "ctiwire.sqlite3")
    await opened.open()
    yield opened
    await opened.close()
