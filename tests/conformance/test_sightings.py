"""Sightings on every backend: every report kept in order, distinct accounts counted per value and kind,
an account's false positives, and the counts written onto IOC records (``modified`` and the data version
move; an unchanged count writes nothing; records stored before the counts read as 0; a new report of the
value by an article keeps them)."""

from __future__ import annotations

import uuid
from datetime import timedelta

from conformance.factories import BASE, at, ioc

from store.mongo import MongoStore
from store.ports import Stores
from store.ports.sightings import Tally
from store.query import IocQuery
from store.records import Sighting
from store.sightings import count_onto_records
from store.sqlite import SqliteStore


def report(user_id: str, value: str, kind: str = "seen", minutes: float = 0, ioc_type: str = "domain") -> Sighting:
    when = at(minutes=minutes)
    return Sighting(str(uuid.uuid4()), user_id, ioc_type, value, kind, when - timedelta(hours=1), when, "note")


async def test_reports_are_kept_and_accounts_counted_once(stores: Stores) -> None:
    reports = [
        report("ana", "evil.example", minutes=1),
        report("ana", "evil.example", minutes=2),
        report("bob", "evil.example", minutes=3),
        report("ana", "evil.example", "false_positive", 4),
        report("cy", "other.example", "false_positive", 5),
    ]
    tallies = await stores.sightings.add_sightings(reports)
    assert tallies == {("domain", "evil.example"): Tally(2, 1), ("domain", "other.example"): Tally(0, 1)}
    assert await stores.sightings.list_sightings("domain", "evil.example") == reports[:4]
    assert await stores.sightings.tallies([("domain", "other.example"), ("ipv4", "1.2.3.4")]) == {
        ("domain", "other.example"): Tally(0, 1)
    }
    assert await stores.sightings.tallies() == tallies
    assert await stores.sightings.false_positives_of("ana") == {("domain", "evil.example")}
    assert await stores.sightings.false_positives_of("bob") == set()


async def test_counts_move_the_record_and_the_data_version(stores: Stores) -> None:
    iocs = stores.iocs
    await iocs.upsert_iocs([ioc("evil.example"), ioc("calm.example")])
    version = await iocs.data_version()
    later = BASE + timedelta(days=3)
    changed = await count_onto_records(
        iocs, {("domain", "evil.example"): Tally(2, 1), ("domain", "unknown.example"): Tally(1, 0)}, later
    )
    assert [(old.sightings, new.sightings, new.false_positives, new.modified) for old, new in changed] == [
        (0, 2, 1, later)
    ]
    assert await iocs.data_version() > version
    stored = await iocs.get_ioc("domain", "evil.example")
    assert stored == changed[0][1] and stored.first_seen == BASE and stored.last_seen == BASE
    rows = [row async for batch in iocs.iter_ioc_rows(IocQuery(values=("evil.example",))) for row in batch]
    assert b'"sightings":2' in rows[0] and b'"false_positives":1' in rows[0]
    assert await iocs.all_iocs(IocQuery(since=later)) == [stored]  # a poller by date sees the change
    version = await iocs.data_version()
    assert await count_onto_records(iocs, {("domain", "evil.example"): Tally(2, 1)}, later) == []
    assert await iocs.data_version() == version  # nothing changed, nothing written


async def test_an_articles_new_report_keeps_the_counts(stores: Stores) -> None:
    iocs = stores.iocs
    await iocs.upsert_iocs([ioc("evil.example")])
    await count_onto_records(iocs, {("domain", "evil.example"): Tally(3, 2)}, BASE + timedelta(hours=1))
    await iocs.upsert_iocs([ioc("evil.example", modified=BASE + timedelta(days=1), sources=["Other"])])
    stored = await iocs.get_ioc("domain", "evil.example")
    assert stored is not None and (stored.sightings, stored.false_positives) == (3, 2)
    assert stored.sources == ["Example News", "Other"]


async def test_records_stored_before_the_counts_read_as_zero(stores: Stores) -> None:
    await stores.iocs.upsert_iocs([ioc("old.example")])
    conn = stores.lifecycle
    if isinstance(conn, MongoStore):
        await conn.db["iocs"].update_one(
            {"_id": "domain:old.example"}, {"$unset": {"sightings": "", "false_positives": ""}}
        )
    else:
        assert isinstance(conn, SqliteStore)
        await conn._run(
            lambda db: db.execute("UPDATE iocs SET doc = json_remove(doc, '$.sightings', '$.false_positives')")
        )
    stored = await stores.iocs.get_ioc("domain", "old.example")
    assert stored is not None and (stored.sightings, stored.false_positives) == (0, 0)
