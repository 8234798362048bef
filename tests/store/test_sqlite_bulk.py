"""The SQLite writer's bulk mode: a seed writes with the larger page cache, serving keeps its bound."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from config.settings import Settings
from ingest.demo import seed_store
from store.factory import make_stores
from store.records import Ioc
from store.sqlite import SqliteIocs, sqlite_stores
from store.sqlite.backend import SqliteStore

SERVING_CACHE = -16384  # PRAGMA cache_size of store.sqlite.schema.PRAGMAS: 16 MiB, in KiB when negative


async def writer_cache(iocs: SqliteIocs) -> int:
    return int(await iocs._run(lambda db: db.execute("PRAGMA cache_size").fetchone()[0]))


async def test_bulk_raises_the_writer_cache_and_gives_it_back(tmp_path: Path) -> None:
    stores = sqlite_stores(tmp_path / "bulk.sqlite3", bulk_cache_mib=64)
    await stores.open()
    try:
        assert isinstance(stores.iocs, SqliteIocs) and isinstance(stores.lifecycle, SqliteStore)
        assert await writer_cache(stores.iocs) == SERVING_CACHE
        async with stores.lifecycle.bulk():
            assert await writer_cache(stores.iocs) == -64 * 1024
        assert await writer_cache(stores.iocs) == SERVING_CACHE
    finally:
        await stores.close()


async def test_a_seed_writes_in_bulk_mode(tmp_path: Path) -> None:
    stores = sqlite_stores(tmp_path / "seed.sqlite3", bulk_cache_mib=32)
    await stores.open()
    assert isinstance(stores.iocs, SqliteIocs)
    iocs, seen = stores.iocs, set[int]()
    upsert = iocs.upsert_iocs

    async def watched(records: Iterable[Ioc]) -> int:
        seen.add(await writer_cache(iocs))
        return await upsert(records)

    iocs.upsert_iocs = watched  # type: ignore[method-assign,assignment]
    try:
        await seed_store(stores, 300)
        assert seen == {-32 * 1024}
        assert await writer_cache(iocs) == SERVING_CACHE
    finally:
        await stores.close()


def test_the_bulk_cache_is_a_setting(tmp_path: Path) -> None:
    stores = make_stores(Settings(data_dir=tmp_path, sqlite_bulk_cache_mb=48))
    assert isinstance(stores.lifecycle, SqliteStore) and stores.lifecycle.bulk_cache_mib == 48
