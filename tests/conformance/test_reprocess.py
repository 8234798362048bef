"""``Store.replace_iocs`` and the re-enrichment of stored articles (``ctiwire enrich --reprocess``),
on every backend."""

from __future__ import annotations

from conformance.factories import BASE, article, at, ioc, mention

from ingest.aggregate import aggregate
from ingest.reprocess import every_article, reprocess
from store.base import Store
from store.query import IocQuery

TEXT = ("The implant beacons to its C2 server at 45.61.137.12.\n"
        "Lindqvist Labs published its scanning results at lindqvistlabs.com on Friday.")
NOW = at(days=3)


async def _values(store: Store) -> set[tuple[str, str]]:
    return {(record.type, record.value) for record in await store.all_iocs(IocQuery(limit=1000))}


async def test_replace_iocs_leaves_exactly_the_given_records(store: Store) -> None:
    await store.upsert_iocs([ioc("old.example-bad.com"), ioc("kept-bad.com", article_ids=["a"])])
    assert await store.replace_iocs([ioc("kept-bad.com", article_ids=["b"]), ioc("new-bad.com")]) == 2
    assert await _values(store) == {("domain", "kept-bad.com"), ("domain", "new-bad.com")}
    kept = await store.get_ioc("domain", "kept-bad.com")
    assert kept is not None and kept.article_ids == ["b"]  # replaced, not merged with what was there
    assert await store.replace_iocs([]) == 0 and await _values(store) == set()


async def test_reprocess_applies_the_current_rules_and_a_second_run_writes_nothing(store: Store) -> None:
    # An article stored by an older rule set: it took the vendor's own site for an IOC and missed the C2.
    stale = article(1, title="New implant found", content=TEXT, iocs=[mention("lindqvistlabs.com")],
                    severity_score=2.0, severity_reasons=["old rules"], category="security-operations")
    quiet = article(2, title="Patch notes", content="The vendor shipped a new release with fixes.")
    await store.upsert_articles([stale, quiet])
    await store.upsert_iocs(aggregate([stale], {}))
    assert ("domain", "lindqvistlabs.com") in await _values(store)

    report = await reprocess(store, {"Example News": "commercial"}, NOW)
    assert (report.articles, report.ioc_records) == (2, 1) and report.changed >= 1
    fresh = await store.get_article(stale.id)
    assert [(m.type, m.value) for m in fresh.iocs] == [("ipv4", "45.61.137.12")]
    assert fresh.severity_reasons[0].startswith("rubric level:") and fresh.modified_at == NOW
    assert fresh.published_at == stale.published_at and fresh.fetched_at == stale.fetched_at
    assert await _values(store) == {("ipv4", "45.61.137.12")}
    record = await store.get_ioc("ipv4", "45.61.137.12")
    assert record is not None and record.article_ids == [stale.id] and record.first_seen == stale.fetched_at

    version = await store.data_version()
    again = await reprocess(store, {"Example News": "commercial"}, NOW.replace(year=BASE.year + 1))
    assert again.changed == 0 and await store.data_version() == version  # idempotent: nothing written
    assert (await store.get_article(stale.id)).modified_at == NOW
    assert await store.count_articles(every_article(), exact=True) == 2
