"""IOC stats and list totals from the counters kept as records change agree with a count from scratch over
the same records, on every backend: after inserts, merges that move a record to a later day or raise its
confidence, and a re-enrichment, for windows starting at midnight, mid-day, before and after the data."""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from conformance.factories import at, ioc

from exporters.ioc_stats import stats_payload
from store.base import IocStats
from store.ioc_counters import coarse, first_whole_hour
from store.mongo import MongoIocs, MongoStore
from store.mongo.ioc_counters import DONE_ID
from store.mongo.iocs import scan as mongo_scan
from store.ports import IocStore, Stores
from store.query import IocQuery
from store.records import CONFIDENCES, SOURCE_CATEGORIES, Ioc, iso
from store.sqlite import SqliteIocs, sqlite_stores
from store.sqlite.backend import SqliteStore
from store.sqlite.ioc_counters import DONE_KEY
from store.sqlite.ioc_counters import scan as sqlite_scan

TYPES = ("domain", "ipv4", "url", "md5")
SOURCES = tuple(f"Feed {n}" for n in range(7))


async def hourly_from_scratch(iocs: IocStore, since: datetime, top: int) -> IocStats:
    """The stats counted over every record modified since ``since`` (no counters), the series per hour."""
    if isinstance(iocs, SqliteIocs):
        return await iocs._run(lambda db: sqlite_scan(db, iso(since), None, top))
    assert isinstance(iocs, MongoIocs)
    return await mongo_scan(iocs._c("iocs"), since, None, top)


async def from_scratch(iocs: IocStore, since: datetime, top: int) -> IocStats:
    """The same, the series per hour through the window's second midnight and per day after, as stored."""
    hourly = await hourly_from_scratch(iocs, since, top)
    return dataclasses.replace(hourly, hourly=coarse(hourly.hourly, since))


def reports(rng: random.Random, count: int, day_span: int) -> list[Ioc]:
    out = []
    for _ in range(count):
        when = at(minutes=rng.randrange(day_span * 24 * 60))
        out.append(
            ioc(
                f"v{rng.randrange(150)}.example",
                rng.choice(TYPES),
                confidence=rng.choice(CONFIDENCES),
                source_category=rng.choice(SOURCE_CATEGORIES),
                sources=rng.sample(SOURCES, rng.randint(1, 3)),
                first_seen=when,
                last_seen=when,
                modified=when,
            )
        )
    return out


# Data over 75 days crosses month boundaries: windows from before the data, mid-day, a month's first day
# and mid-month read the day counters of a partial month and the month counters after it.
SINCES = [
    at(days=-1),
    at(),
    at(minutes=-12 * 60),
    at(days=3, minutes=17),
    at(days=9, minutes=-1),
    at(days=40),
    at(days=61, minutes=5),
    at(days=80),
    *(datetime(year, month, 1, tzinfo=UTC) for year, month in ((2025, 3), (2025, 4), (2025, 5))),
]


async def assert_agree(iocs: IocStore) -> None:
    for since in SINCES:
        want, got = await from_scratch(iocs, since, 5), await iocs.ioc_stats(since, top=5)
        assert got == want, since
        hourly = await hourly_from_scratch(iocs, since, 5)
        for window, now in (("30d", at(days=12)), ("1d", since + timedelta(days=1)), ("365d", at(days=90))):
            # The daily and hourly series of the payload are those of the records' hours.
            assert stats_payload(got, window, since, now) == stats_payload(hourly, window, since, now), window
        for filters in ({}, {"types": ("domain", "url")}, {"confidences": ("high",), "categories": ("community",)}):
            query = IocQuery(since=since, **filters)  # type: ignore[arg-type]
            assert await iocs.estimate_iocs(query) == (await iocs.count_iocs(query), True), (since, filters)


async def test_counters_agree_with_a_count_from_scratch(iocs: IocStore) -> None:
    rng = random.Random(1)
    await iocs.upsert_iocs(reports(rng, 200, 75))
    await assert_agree(iocs)
    for _ in range(3):  # re-reports move records to later days (and months), other confidences and sources
        await iocs.upsert_iocs(reports(rng, 120, 75))
    await assert_agree(iocs)
    await iocs.replace_iocs(reports(rng, 80, 75))
    await assert_agree(iocs)


async def test_windows_starting_inside_a_busy_hour_agree(iocs: IocStore) -> None:
    """Records every few minutes around the windows' starts: those before the nearer whole hour are added
    to its counters, those after it taken away, whichever side of the half hour the window starts."""
    rng = random.Random(4)
    busy = [
        dataclasses.replace(record, modified=when, first_seen=when, last_seen=when)
        for minutes in range(0, 180, 3)
        for when in (at(days=5, minutes=minutes),)
        for record in reports(rng, 1, 1)
    ]
    await iocs.upsert_iocs(busy)
    for minutes in (1, 17, 29, 30, 31, 44, 59, 60, 61, 125):
        since = at(days=5, minutes=minutes)
        assert await iocs.ioc_stats(since, top=5) == await from_scratch(iocs, since, 5), minutes


async def test_estimates_outside_the_counters_are_capped_counts(iocs: IocStore) -> None:
    await iocs.upsert_iocs([ioc(f"d{n}.example", industries=["finance"] if n % 2 else []) for n in range(9)])
    assert await iocs.estimate_iocs(IocQuery(industries=("finance",))) == (4, True)
    assert await iocs.estimate_iocs(IocQuery(value_contains="d1")) == (1, True)
    assert await iocs.estimate_iocs(IocQuery(since=at(days=-1) + timedelta(hours=3))) == (9, True)


async def test_a_database_from_before_the_month_counters_gets_them_at_open(tmp_path: Path) -> None:
    stores = sqlite_stores(tmp_path / "old.sqlite3")
    await stores.open()
    await stores.iocs.upsert_iocs(reports(random.Random(2), 150, 75))
    assert isinstance(stores.iocs, SqliteIocs)
    script = f"DELETE FROM ioc_month_counts; UPDATE meta SET value = 1 WHERE key = '{DONE_KEY}';"
    await stores.iocs._run(lambda db: db.executescript(script))
    await stores.close()
    stores = sqlite_stores(tmp_path / "old.sqlite3")
    await stores.open()
    try:
        await assert_agree(stores.iocs)
    finally:
        await stores.close()


async def reopened(stores: Stores) -> Stores:
    """``stores`` opened again (a SQLite store's pool ends with it: a new one on the same file)."""
    if isinstance(stores.lifecycle, SqliteStore):
        await stores.close()
        stores = sqlite_stores(stores.lifecycle.path)
    await stores.open()
    return stores


async def test_month_sources_and_day_totals_are_summed_from_older_counters_at_open(stores: Stores) -> None:
    """A database from before the month source and day total counters gets them from its day source and
    hour counters: records deleted behind the counters' back are not read (a recount would miss them). Windows
    from a whole hour, which the counters answer alone."""
    await stores.iocs.upsert_iocs(reports(random.Random(3), 150, 75))
    sinces = [since for since in SINCES if since == first_whole_hour(since)]
    want = {since: await stores.iocs.ioc_stats(since, top=5) for since in sinces}
    if isinstance(stores.iocs, SqliteIocs):
        script = (
            "DELETE FROM ioc_month_sources; DELETE FROM ioc_day_totals; DELETE FROM iocs;"
            f"UPDATE meta SET value = 3 WHERE key = '{DONE_KEY}';"
        )
        await stores.iocs._run(lambda db: db.executescript(script))
    else:
        assert isinstance(stores.lifecycle, MongoStore)
        db = stores.lifecycle.db
        await db["ioc_counters"].delete_many({"k": {"$in": ["ms", "dt"]}})
        await db["iocs"].delete_many({})
        await db["meta"].update_one({"_id": DONE_ID}, {"$set": {"value": 3}})
    again = await reopened(stores)
    try:
        assert {since: await again.iocs.ioc_stats(since, top=5) for since in sinces} == want
    finally:
        if again is not stores:
            await again.close()
