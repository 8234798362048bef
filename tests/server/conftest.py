"""The spine's tests run through real HTTP on every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mongo_support import backend_stores, server_backends
from support import RunningServer, make_settings, start_server, stop_server

from store.mongo import MongoStore


@pytest.fixture(params=server_backends())
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RunningServer]:
    running = await start_server(make_settings(tmp_path), backend_stores(request.param))
    yield running
    if isinstance(running.ctx.stores.lifecycle, MongoStore):
        await running.ctx.stores.lifecycle.client.drop_database(running.ctx.stores.lifecycle.db_name)
    await stop_server(running)
