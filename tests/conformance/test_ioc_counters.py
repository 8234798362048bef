"""IOC stats and list totals from the counters kept as records change agree with a count from scratch over
the same records, on every backend: after inserts, merges that move a record to a later day or raise its
confidence, and a re-enrichment, for windows starting at midnight, mid-day, before and after the data."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from conformance.factories import at, ioc

from exporters.ioc_stats import stats_payload
from store.base import IocStats
from store.mongo import MongoIocs
from store.mongo.iocs import scan as mongo_scan
from store.ports import IocStore
from store.query import IocQuery
from store.records import CONFIDENCES, SOURCE_CATEGORIES, Ioc, iso
from store.sqlite import SqliteIocs, sqlite_stores
from store.sqlite.ioc_counters import DONE_KEY
from store.sqlite.ioc_counters import scan as sqlite_scan

TYPES = ("domain", "ipv4", "url", "md5")
SOURCES = tuple(f"Feed {n}" for n in range(7))


async def from_scratch(iocs: IocStore, since: datetime, top: int) -> IocStats:
    """The stats counted over every record modified since ``since`` (no counters)."""
    if isinstance(iocs, SqliteIocs):
        return await iocs._run(lambda db: sqlite_scan(db, iso(since), None, top))
    assert isinstance(iocs, MongoIocs)
    return await mongo_scan(iocs._c("iocs"), since, None, top)


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
        now = at(days=12)
        assert stats_payload(got, "30d", since, now) == stats_payload(want, "30d", since, now)
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
