"""Warninglisted records on every backend: stored with their lists, left out of queries, counts and stats by
default, back with ``include_warninglisted``; a re-report keeps the lists the latest check gave."""

from __future__ import annotations

import dataclasses

from conformance.factories import at, ioc

from store.ports import IocStore
from store.query import IocQuery

RESOLVERS = ["List of known IPv4 public DNS resolvers"]


async def values(iocs: IocStore, query: IocQuery) -> list[str]:
    return [r.value async for batch in iocs.iter_iocs(query) for r in batch]


async def seeded(iocs: IocStore) -> None:
    await iocs.upsert_iocs(
        [
            ioc("8.8.8.8", "ipv4", warninglists=RESOLVERS, modified=at(minutes=1)),
            ioc("45.153.160.7", "ipv4", modified=at(minutes=2)),
            ioc("evil.example", modified=at(minutes=3)),
        ]
    )


async def test_listed_records_are_left_out_by_default(iocs: IocStore) -> None:
    await seeded(iocs)
    assert sorted(await values(iocs, IocQuery())) == ["45.153.160.7", "evil.example"]
    assert sorted(await values(iocs, IocQuery(include_warninglisted=True))) == [
        "45.153.160.7",
        "8.8.8.8",
        "evil.example",
    ]
    assert await values(iocs, IocQuery(values=("8.8.8.8",))) == []
    assert await iocs.count_iocs(IocQuery(since=at())) == 2
    assert await iocs.count_iocs(IocQuery(since=at(), include_warninglisted=True)) == 3
    assert await iocs.estimate_iocs(IocQuery(since=at(days=-2))) == (2, True)
    assert (await iocs.estimate_iocs(IocQuery(since=at(days=-2), include_warninglisted=True)))[0] == 3


async def test_records_keep_their_lists(iocs: IocStore) -> None:
    await seeded(iocs)
    held = await iocs.get_ioc("ipv4", "8.8.8.8")
    assert held is not None and held.warninglists == RESOLVERS and held.warninglisted
    assert held.to_api()["warninglists"] == RESOLVERS and held.to_api()["warninglisted"] is True
    rows = [r async for batch in iocs.iter_ioc_rows(IocQuery(include_warninglisted=True)) for r in batch]
    assert any(b'"warninglisted":true' in r for r in rows)
    plain = await iocs.get_ioc("ipv4", "45.153.160.7")
    assert plain is not None and plain.warninglists == [] and not plain.warninglisted


async def test_a_recheck_that_unlists_a_value_brings_it_back(iocs: IocStore) -> None:
    await seeded(iocs)
    held = await iocs.get_ioc("ipv4", "8.8.8.8")
    assert held is not None
    await iocs.upsert_iocs([dataclasses.replace(held, warninglists=[], modified=at(minutes=9))])
    assert "8.8.8.8" in await values(iocs, IocQuery())
    assert await iocs.estimate_iocs(IocQuery(since=at(days=-2))) == (3, True)


async def test_stats_count_what_was_left_out(iocs: IocStore) -> None:
    await seeded(iocs)
    stats = await iocs.ioc_stats(at(days=-30))
    assert stats.total == 2 and stats.warninglisted == 1
    assert stats.by_type == {"domain": 1, "ipv4": 1}
