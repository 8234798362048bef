"""IOC records on every backend: merge on upsert (first_seen never moves later), idempotence, concurrent
writers, every IocQuery filter, keyset order on (first_seen, type, value), counts and stats."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from conformance.factories import at, ioc, replace

from store.codec import merge_ioc
from store.decay import clock
from store.ports import IocStore
from store.query import IocQuery
from store.records import Ioc, utcnow
from taxii.page_query import next_expiry


async def test_round_trip_and_missing(iocs: IocStore) -> None:
    record = ioc("evil.example", industries=["finance"], article_ids=["a1"], cves=["CVE-2024-1"],
                 techniques=["T1059"], threat_actors=["lazarus"], first_seen=at(minutes=-5))
    assert await iocs.upsert_iocs([record]) == 1
    assert await iocs.get_ioc("domain", "evil.example") == record
    assert await iocs.get_ioc("ipv4", "evil.example") is None
    assert await iocs.get_ioc("domain", "other.example") is None


async def test_get_iocs_reads_one_type_by_values(iocs: IocStore) -> None:
    domains = [ioc(f"d{n}.example", article_ids=[f"a{n}"]) for n in range(1_203)]  # more than one chunk
    address = ioc("d1.example", "url")  # the same text as another type: never among the domains
    await iocs.upsert_iocs([*domains, address])
    asked = ["missing.example", domains[1_202].value, domains[0].value, domains[0].value,
             *(d.value for d in domains[1:1_100])]
    found = await iocs.get_iocs("domain", asked)
    assert found == {d.value: d for d in domains[:1_100] + [domains[1_202]]}
    assert await iocs.get_iocs("url", ["d1.example", "d2.example"]) == {"d1.example": address}
    assert await iocs.get_iocs("ipv4", []) == {}


async def test_merge_keeps_the_earliest_first_seen_and_unions_lists(iocs: IocStore) -> None:
    old = ioc("evil.example", first_seen=at(days=-3), last_seen=at(days=-1), modified=at(days=-1),
              sources=["Beta", "Gamma"], article_ids=["a2"], confidence="low")
    new = ioc("evil.example", first_seen=at(days=-2), last_seen=at(), modified=at(), sources=["Alpha", "Beta"],
              article_ids=["a1"], industries=["energy"], confidence="high", feed_name="Alpha",
              source_category="government")
    await iocs.upsert_iocs([old])
    await iocs.upsert_iocs([new])
    merged = await iocs.get_ioc("domain", "evil.example")
    assert merged is not None
    assert merged.first_seen == at(days=-3)  # an incoming later first_seen never moves it
    assert (merged.last_seen, merged.modified) == (at(), at())
    assert merged.sources == ["Alpha", "Beta", "Gamma"]
    assert (merged.article_ids, merged.industries) == (["a1", "a2"], ["energy"])
    assert (merged.confidence, merged.feed_name, merged.source_category) == ("high", "Alpha", "government")
    assert merged == merge_ioc(old, new)
    earlier = replace(new, first_seen=at(days=-9), last_seen=at(days=-9), modified=at(days=-9))
    await iocs.upsert_iocs([earlier])
    again = await iocs.get_ioc("domain", "evil.example")
    assert again is not None and again.first_seen == at(days=-9) and again.last_seen == at()


async def test_upsert_is_idempotent_and_bumps_the_data_version(iocs: IocStore) -> None:
    batch = [ioc(f"d{n}.example", sources=["A"]) for n in range(5)]
    start = await iocs.data_version()
    assert await iocs.upsert_iocs(batch) == 5
    first = await iocs.all_iocs(IocQuery(limit=100))
    assert await iocs.upsert_iocs(batch) == 5
    assert await iocs.all_iocs(IocQuery(limit=100)) == first
    assert await iocs.data_version() == start + 2
    assert await iocs.upsert_iocs([]) == 0
    assert await iocs.data_version() == start + 2


async def test_one_batch_with_repeated_keys_merges_them(iocs: IocStore) -> None:
    a = ioc("evil.example", first_seen=at(minutes=5), sources=["A"])
    b = ioc("evil.example", first_seen=at(minutes=1), sources=["B"])
    assert await iocs.upsert_iocs(iter([a, b])) == 2
    stored = await iocs.get_ioc("domain", "evil.example")
    assert stored is not None and stored.first_seen == at(minutes=1) and stored.sources == ["A", "B"]
    assert await iocs.count_iocs(IocQuery()) == 1


async def test_concurrent_runs_converge_to_the_sequential_merge(iocs: IocStore) -> None:
    reports = [[ioc(f"d{k}.example", first_seen=at(minutes=run * 3 - k), last_seen=at(minutes=run), modified=at(),
                    sources=[f"S{run}"], article_ids=[f"a{run}-{k}"]) for k in range(8)] for run in range(6)]
    await asyncio.gather(*(iocs.upsert_iocs(batch) for batch in reports))
    for k in range(8):
        want = reports[0][k]
        for run in range(1, 6):
            want = merge_ioc(want, reports[run][k])
        assert await iocs.get_ioc("domain", f"d{k}.example") == want


CORPUS = [
    ioc("198.51.100.7", "ipv4", confidence="high", source_category="government", industries=["energy"],
        first_seen=at(minutes=3), modified=at(minutes=30), sources=["Gov", "Alpha"], threat_actors=["lazarus"]),
    ioc("evil.example", confidence="medium", industries=["finance", "retail"], first_seen=at(minutes=1),
        modified=at(minutes=10), sources=["Alpha"], threat_actors=["apt28", "lazarus"]),
    ioc("Evil-Login.example", confidence="low", source_category="community", first_seen=at(minutes=1),
        modified=at(minutes=50), sources=["Forum"]),
    ioc("http://evil.example/a", "url", industries=["finance"], first_seen=at(minutes=1), modified=at(minutes=5),
        sources=["Alpha", "Beta"]),
    ioc("d41d8cd98f00b204e9800998ecf8427e", "md5", confidence="high", first_seen=at(days=-1, minutes=2),
        modified=at(days=-1), sources=["Beta"]),
    ioc("CVE-2024-3094", "cve", first_seen=at(days=1), modified=at(days=1), sources=["Gov"]),
    ioc("203.0.113.5", "ipv4", first_seen=at(minutes=1), modified=at(minutes=40), sources=["Alpha"]),
]
UNKNOWN_ID = "indicator--00000000-0000-5000-8000-000000000000"
ORDER = sorted(CORPUS, key=lambda i: (i.first_seen, i.type, i.value))

Case = tuple[str, dict[str, Any], Callable[[Ioc], bool]]
CASES: list[Case] = [
    ("all", {}, lambda i: True),
    ("types", {"types": ("ipv4", "url")}, lambda i: i.type in ("ipv4", "url")),
    ("confidences", {"confidences": ("high",)}, lambda i: i.confidence == "high"),
    ("categories", {"categories": ("government", "community")},
     lambda i: i.source_category in ("government", "community")),
    ("industries any", {"industries": ("retail", "energy")}, lambda i: bool({"retail", "energy"} & set(i.industries))),
    ("sources any", {"sources": ("Beta", "Forum")}, lambda i: bool({"Beta", "Forum"} & set(i.sources))),
    ("threat actors any", {"threat_actors": ("apt28", "sandworm")}, lambda i: "apt28" in i.threat_actors),
    ("sources and actors ANDed", {"sources": ("Gov",), "threat_actors": ("lazarus",)},
     lambda i: "Gov" in i.sources and "lazarus" in i.threat_actors),
    ("values", {"values": ("evil.example", "203.0.113.5", "nope")},
     lambda i: i.value in ("evil.example", "203.0.113.5")),
    ("value contains, case-sensitive", {"value_contains": "evil"}, lambda i: "evil" in i.value),
    ("value contains dot literal", {"value_contains": "l.e"}, lambda i: "l.e" in i.value),
    ("since bounds modified", {"since": at(minutes=30)}, lambda i: i.modified >= at(minutes=30)),
    # Expired since: the date_added of each (its current version's) is its expiry, days to months after BASE.
    ("added after bounds date_added", {"added_after": at(days=20)},
     lambda i: i.date_added(clock(utcnow())) > at(days=20)),
    ("combined", {"types": ("domain", "url"), "since": at(minutes=5)},
     lambda i: i.type in ("domain", "url") and i.modified >= at(minutes=5)),
    ("stix ids ORed, unknown ignored", {"stix_ids": (CORPUS[0].stix_id, CORPUS[5].stix_id, UNKNOWN_ID)},
     lambda i: i in (CORPUS[0], CORPUS[5])),
    ("stix ids ANDed with the other filters",
     {"stix_ids": tuple(i.stix_id for i in CORPUS), "types": ("domain",), "added_after": at(minutes=0)},
     lambda i: i.type == "domain"),
]


@pytest.fixture
async def loaded(iocs: IocStore) -> IocStore:
    await iocs.upsert_iocs(CORPUS)
    return iocs


@pytest.mark.parametrize(("name", "filters", "pred"), CASES, ids=[c[0] for c in CASES])
async def test_filters_and_order(loaded: IocStore, name: str, filters: dict[str, Any],
                                 pred: Callable[[Ioc], bool]) -> None:
    want = [i for i in ORDER if pred(i)]
    assert want and (name == "all" or len(want) < len(ORDER)), "case must discriminate"
    assert await loaded.all_iocs(IocQuery(limit=100, **filters)) == want
    assert await loaded.count_iocs(IocQuery(limit=1, offset=2, **filters)) == len(want)


async def test_keyset_walk_and_batches(loaded: IocStore) -> None:
    walked: list[Ioc] = []
    after = None
    while page := await loaded.all_iocs(IocQuery(limit=2, after=after)):
        walked += page
        after = (page[-1].first_seen, page[-1].type, page[-1].value)
    assert walked == ORDER
    batches = [b async for b in loaded.iter_iocs(IocQuery(limit=6, offset=1), batch_size=2)]
    assert [len(b) for b in batches] == [1, 2, 2, 1]  # the first batch is a fifth of batch_size, at least a row
    assert [i for b in batches for i in b] == ORDER[1:7]
    assert await loaded.count_iocs(IocQuery(after=after)) == len(CORPUS)


async def test_a_walk_in_date_added_order_meets_every_record_once(loaded: IocStore) -> None:
    """TAXII's order (IocQuery.added_order): by the current version's date_added, the expiry for a record that
    expired after its last change, read from the modified and valid_until indexes and merged."""
    now = clock(utcnow())
    await loaded.revoke_ioc("cve", "CVE-2024-3094", "false positive", now)
    held = await loaded.all_iocs(IocQuery(limit=100))
    order = sorted(held, key=lambda i: (i.date_added(now), i.type, i.value))
    assert any(i.date_added(now) == i.valid_until > i.modified for i in held)  # expired since: dated by expiry
    assert any(i.revoked and i.date_added(now) == now for i in held)
    for size, types in ((1, ()), (2, ()), (3, ("domain",)), (2, ("domain", "ipv4"))):
        walked: list[Ioc] = []
        after = None
        while page := await loaded.all_iocs(IocQuery(types=types, added_order=True, now=now, after=after, limit=size)):
            walked += page
            after = (page[-1].date_added(now), page[-1].type, page[-1].value)
        assert walked == [i for i in order if not types or i.type in types], (size, types)
    later = IocQuery(added_order=True, now=now, added_after=order[2].date_added(now), limit=100)
    assert await loaded.all_iocs(later) == [i for i in order if i.date_added(now) > order[2].date_added(now)]
    assert await loaded.count_iocs(later) == len(await loaded.all_iocs(later))


async def test_the_next_expiry_is_the_earliest_valid_until_to_come_of_a_record_not_revoked(loaded: IocStore) -> None:
    ordered = sorted(CORPUS, key=lambda i: i.valid_until)
    assert await next_expiry(loaded, at(days=-400)) == ordered[0].valid_until
    assert await next_expiry(loaded, ordered[0].valid_until) == ordered[1].valid_until
    first = ordered[0]
    await loaded.revoke_ioc(first.type, first.value, "false positive", at())
    assert await next_expiry(loaded, at(days=-400)) == ordered[1].valid_until
    assert await next_expiry(loaded, ordered[-1].valid_until) is None


async def test_keyset_ties_on_first_seen_break_on_type_then_value(loaded: IocStore) -> None:
    tied = [i for i in ORDER if i.first_seen == at(minutes=1)]
    assert [(i.type, i.value) for i in tied] == [("domain", "Evil-Login.example"), ("domain", "evil.example"),
                                                ("ipv4", "203.0.113.5"), ("url", "http://evil.example/a")]
    after = (at(minutes=1), "domain", "evil.example")
    rows = await loaded.all_iocs(IocQuery(after=after, limit=3))
    assert rows == ORDER[ORDER.index(tied[1]) + 1:][:3]


async def test_stats_over_records_modified_since(loaded: IocStore) -> None:
    since = at(minutes=5)
    window = [i for i in CORPUS if i.modified >= since]
    stats = await loaded.ioc_stats(since, top=2)
    assert stats.total == len(window) == 6
    assert stats.by_type == dict(sorted(Counter(i.type for i in window).items()))
    assert stats.by_confidence == dict(sorted(Counter(i.confidence for i in window).items()))
    assert stats.by_category == dict(sorted(Counter(i.source_category for i in window).items()))
    assert stats.top_sources == [("Alpha", 4), ("Gov", 2)]
    hours = Counter(i.modified.strftime("%Y-%m-%dT%H") for i in window)  # by modified, as the total counts
    assert stats.hourly == sorted(hours.items()) and sum(n for _, n in stats.hourly) == stats.total
    assert list(stats.by_type) == sorted(stats.by_type)


async def test_stats_top_sources_break_ties_by_name_and_empty_window(loaded: IocStore) -> None:
    stats = await loaded.ioc_stats(at(days=-2), top=10)
    assert stats.top_sources == [("Alpha", 4), ("Beta", 2), ("Gov", 2), ("Forum", 1)]
    empty = await loaded.ioc_stats(at(days=5))
    assert (empty.total, empty.by_type, empty.top_sources, empty.hourly) == (0, {}, [], [])


async def test_counts_follow_every_write_though_sqlite_reuses_them(iocs: IocStore) -> None:
    query = IocQuery(types=("domain",), limit=10)
    await iocs.upsert_iocs([ioc("a-bad.com"), ioc("b-bad.com")])
    assert await iocs.count_iocs(query) == 2 and await iocs.count_iocs(query) == 2
    await iocs.upsert_iocs([ioc("c-bad.com")])
    assert await iocs.count_iocs(query) == 3
    await iocs.replace_iocs([ioc("d-bad.com")])
    assert await iocs.count_iocs(query) == 1
