"""IOC records by STIX object id on every backend (TAXII 2.1 s. 3.4.2 ``match[id]``, s. 5.5-5.7): the id is
written with every record, read by index, combined with keyset paging, and backfilled into databases
made before it was stored."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
from conformance.factories import at, ioc

from store.codec import to_doc
from store.mongo import MongoStore
from store.ports import IocStore, Lifecycle, Stores
from store.query import IocQuery
from store.records import Ioc, iso
from store.sqlite import SqliteStore, sqlite_stores
from store.sqlite.queries import ioc_where
from store.sqlite.schema import SCHEMA

ROWS = [ioc(f"d{n}.example", first_seen=at(minutes=n % 4)) for n in range(12)]
WANTED = ROWS[1::3]  # four records, first seen out of value order


def _key(i: Ioc) -> tuple[object, str, str]:
    return (i.first_seen, i.type, i.value)


async def test_ids_keep_the_keyset_order_and_walk(iocs: IocStore) -> None:
    await iocs.upsert_iocs(ROWS)
    query = IocQuery(stix_ids=tuple(i.stix_id for i in WANTED), limit=2)
    first = await iocs.all_iocs(query)
    rest = await iocs.all_iocs(IocQuery(stix_ids=query.stix_ids, after=_key(first[-1]), limit=10))
    assert first + rest == sorted(WANTED, key=_key)
    batches = [b async for b in iocs.iter_iocs(IocQuery(stix_ids=query.stix_ids, limit=10), batch_size=3)]
    assert [len(b) for b in batches] == [1, 3]  # the first batch is a fifth of batch_size, at least a row
    assert await iocs.count_iocs(query) == 4


async def test_spellings_of_one_cve_are_one_vulnerability(iocs: IocStore) -> None:
    spellings = [ioc("CVE-2024-3400", "cve"), ioc("cve-2024-3400", "cve"), ioc("CVE-2024-3401", "cve")]
    await iocs.upsert_iocs(spellings)
    rows = await iocs.all_iocs(IocQuery(stix_ids=(spellings[0].stix_id,), limit=10))
    assert [r.value for r in rows] == ["CVE-2024-3400", "cve-2024-3400"]


async def test_records_written_without_the_id_are_backfilled_at_open(stores: Stores) -> None:
    iocs = stores.iocs
    await iocs.upsert_iocs(ROWS)
    await _forget_stix_ids(stores.lifecycle)
    query = IocQuery(stix_ids=(WANTED[0].stix_id,), limit=10)
    assert await iocs.all_iocs(query) == []  # as a database from before the column would answer
    await stores.open()
    assert await iocs.all_iocs(query) == [WANTED[0]]
    await stores.open()  # idempotent: nothing left to backfill
    assert await iocs.all_iocs(query) == [WANTED[0]]


async def _forget_stix_ids(conn: Lifecycle) -> None:
    if isinstance(conn, MongoStore):
        for row in ROWS:  # update_one: the mock adapter offers what the store calls, no update_many
            await conn.db["iocs"].update_one({"_id": f"{row.type}:{row.value}"}, {"$unset": {"stix_id": ""}})
    else:
        assert isinstance(conn, SqliteStore)
        await conn._run(lambda db: db.execute("UPDATE iocs SET stix_id = NULL"))


def _old_database(path: Path, rows: list[Ioc]) -> None:
    """A database as releases before ``stix_id`` made it: their schema, their ten-column rows."""
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO iocs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (i.type, i.value, iso(i.first_seen), iso(i.last_seen), iso(i.modified), i.confidence, i.feed_name,
         i.source_category, "[]", orjson.dumps(to_doc(i), default=iso)) for i in rows])
    db.commit()
    db.close()


async def test_an_old_sqlite_database_gains_the_column_index_and_ids(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    _old_database(path, ROWS)
    stores = sqlite_stores(path)
    await stores.open()
    iocs = stores.iocs
    try:
        wanted = IocQuery(stix_ids=tuple(i.stix_id for i in WANTED), limit=10)
        assert await iocs.all_iocs(wanted) == sorted(WANTED, key=_key)
        await iocs.upsert_iocs([ioc("new.example")])  # named columns: the appended column is written too
        assert await iocs.all_iocs(IocQuery(stix_ids=(ioc("new.example").stix_id,))) == [ioc("new.example")]
        plan = await stores.lifecycle._all(f"EXPLAIN QUERY PLAN SELECT doc FROM iocs WHERE {ioc_where(wanted)[0]}",
                                ioc_where(wanted)[1])
        assert any("iocs_stix_id" in row[3] for row in plan), [tuple(r) for r in plan]  # read by index
    finally:
        await stores.close()
