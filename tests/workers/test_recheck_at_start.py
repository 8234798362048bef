"""A worker starting on a release whose warninglists differ from those the stored IOCs were checked against
checks them again by itself (a real Celery worker, a real redis-server, the shared SQLite file)."""

from __future__ import annotations

import asyncio

import pytest
from support import wait_for

from store.records import Ioc, utcnow
from store.warninglists import warninglists

pytestmark = [pytest.mark.redis, pytest.mark.slow]  # a real Celery worker


async def _write(stores, records: list[Ioc]) -> None:
    await stores.open()
    try:
        await stores.iocs.upsert_iocs(records)
    finally:
        await stores.close()


async def _read(stores) -> tuple[Ioc | None, str | None]:
    await stores.open()
    try:
        return await stores.iocs.get_ioc("ipv4", "8.8.8.8"), await stores.iocs.warninglists_version()
    finally:
        await stores.close()


def test_a_starting_worker_rechecks_the_stored_iocs(worker_env) -> None:
    now = utcnow()
    asyncio.run(_write(worker_env.store(), [Ioc("ipv4", "8.8.8.8", "high", "F", "commercial", now, now, now)]))
    worker_env.start_worker()

    def rechecked() -> bool:
        record, version = asyncio.run(_read(worker_env.store()))
        return version == warninglists().version and record is not None and record.warninglisted

    wait_for(rechecked, 120, "the worker's start check to list 8.8.8.8", worker_env)
    record, _ = asyncio.run(_read(worker_env.store()))
    assert record is not None and "List of known IPv4 public DNS resolvers" in record.warninglists
    assert record.modified > now
