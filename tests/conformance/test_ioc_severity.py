"""An IOC record's severity on every backend: the highest of its reporting articles' scores, merged at
write time in any order, filtered by the spec's severity buckets (half-open: 8.95 is high)."""

from __future__ import annotations

from conformance.factories import article, ioc, mention

from ingest.aggregate import aggregate
from store.decay import STATUSES
from store.ports import IocStore, Stores
from store.query import IocFilters, IocQuery


async def values(iocs: IocStore, *labels: str) -> list[str]:
    # Every status: the factory's records are long expired, and the severity buckets are what is checked.
    query = IocFilters(severities=labels, statuses=STATUSES).query(limit=100)
    return sorted(r.value for batch in [b async for b in iocs.iter_iocs(query)] for r in batch)


async def test_the_highest_reporting_score_is_kept_whatever_the_order(iocs: IocStore) -> None:
    for score in (4.0, 9.5, 2.0):
        await iocs.upsert_iocs([ioc("a-bad.com", severity=score)])
    await iocs.upsert_iocs([ioc("b-bad.com", severity=3.0), ioc("b-bad.com", severity=8.95)])  # one batch
    a, b = await iocs.get_ioc("domain", "a-bad.com"), await iocs.get_ioc("domain", "b-bad.com")
    assert a is not None and b is not None
    assert (a.severity, b.severity) == (9.5, 8.95)
    assert (a.to_api()["severity_label"], b.to_api()["severity_label"]) == ("critical", "high")


async def test_buckets_filter_pages_counts_and_estimates(iocs: IocStore) -> None:
    scores = {"crit-bad.com": 9.0, "high-bad.com": 8.99, "med-bad.com": 4.0, "low-bad.com": 3.9, "zero-bad.com": 0.0}
    await iocs.upsert_iocs([ioc(value, severity=score) for value, score in scores.items()])
    assert await values(iocs, "critical") == ["crit-bad.com"]
    assert await values(iocs, "high", "medium") == ["high-bad.com", "med-bad.com"]
    assert await values(iocs, "low") == ["low-bad.com", "zero-bad.com"]
    assert await values(iocs) == sorted(scores)
    query = IocQuery(severities=("low",), types=("domain",))
    assert await iocs.count_iocs(query) == 2 and await iocs.estimate_iocs(query) == (2, True)


async def test_records_built_from_articles_carry_their_articles_highest_score(stores: Stores) -> None:
    quiet = article(1, severity_score=3.0, iocs=[mention("shared-bad.com"), mention("quiet-bad.com")])
    loud = article(2, severity_score=9.2, iocs=[mention("shared-bad.com")])
    await stores.iocs.upsert_iocs(aggregate([quiet], {}))
    await stores.iocs.upsert_iocs(aggregate([loud], {}))
    assert await values(stores.iocs, "critical") == ["shared-bad.com"]
    assert await values(stores.iocs, "low") == ["quiet-bad.com"]
    assert await stores.iocs.replace_iocs(aggregate([quiet], {})) == 2  # a rebuild recomputes from the articles
    assert await values(stores.iocs, "low") == ["quiet-bad.com", "shared-bad.com"]
