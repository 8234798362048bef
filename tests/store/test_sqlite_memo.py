"""The SQLite store remembers its hot point reads (a key with its user, the data version) until the file's
next commit; another process's write must still be seen by the very next read."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from conformance.factories import api_key, user

from store.ports import Stores
from store.records import Ioc, utcnow
from store.sqlite import sqlite_stores


@pytest.fixture
async def two(tmp_path: Path) -> AsyncIterator[tuple[Stores, Stores]]:
    """Two stores on one file, as the server and the CLI (or two server processes) hold it."""
    stores = (sqlite_stores(tmp_path / "ctiwire.sqlite3"), sqlite_stores(tmp_path / "ctiwire.sqlite3"))
    for store in stores:
        await store.open()
    yield stores
    for store in stores:
        await store.close()


async def test_another_process_deleting_a_key_stops_it_at_the_next_read(two: tuple[Stores, Stores]) -> None:
    server, cli = two
    ana = await cli.accounts.create_user(user())
    key = await cli.accounts.create_key(api_key(ana, "main"), 3)
    assert await server.accounts.key_with_user(key.key_hash) == (key, ana)
    assert await server.accounts.key_with_user(key.key_hash) == (key, ana)  # remembered: no change meanwhile
    await cli.accounts.set_key_active(ana.id, "main", False)
    found = await server.accounts.key_with_user(key.key_hash)
    assert found is not None and found[0].active is False
    await cli.accounts.delete_key(ana.id, "main")
    assert await server.accounts.key_with_user(key.key_hash) is None


async def test_an_unknown_key_becomes_known_when_another_process_creates_it(
        two: tuple[Stores, Stores]) -> None:
    server, cli = two
    ana = await cli.accounts.create_user(user())
    key = api_key(ana, "later")
    assert await server.accounts.key_with_user(key.key_hash) is None  # the miss is remembered too...
    await cli.accounts.create_key(key, 3)
    assert await server.accounts.key_with_user(key.key_hash) == (key, ana)  # ...until the next commit


async def test_the_data_version_follows_writes_of_either_process(two: tuple[Stores, Stores]) -> None:
    server, cli = two
    start = await server.iocs.data_version()
    now = utcnow()
    await cli.iocs.upsert_iocs([Ioc("ipv4", "203.0.113.9", "high", "Feed", "government", now, now, now)])
    assert await server.iocs.data_version() == start + 1
    await server.iocs.upsert_iocs([Ioc("ipv4", "203.0.113.10", "high", "Feed", "government", now, now, now)])
    assert await server.iocs.data_version() == await cli.iocs.data_version() == start + 2
