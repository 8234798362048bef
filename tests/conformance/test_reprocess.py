"""``IocStore.replace_iocs`` and the re-enrichment of stored articles (``ctiwire enrich --reprocess``),
on every backend."""

from __future__ import annotations

from conformance.factories import BASE, article, at, ioc, mention

from ingest.aggregate import aggregate
from ingest.reprocess import every_article, reprocess
from store.ports import Stores
from store.query import IocQuery
from store.records import Sighting
from store.stix_context import ContextQuery
from store.stixids import object_id

TEXT = ("The implant beacons to its C2 server at 45.61.137.12.\n"
        "Lindqvist Labs published its scanning results at lindqvistlabs.com on Friday.")
NOW = at(days=3)


async def _values(stores: Stores) -> set[tuple[str, str]]:
    return {(record.type, record.value) for record in await stores.iocs.all_iocs(IocQuery(limit=1000))}


async def test_replace_iocs_leaves_exactly_the_given_records(stores: Stores) -> None:
    await stores.iocs.upsert_iocs([ioc("old.example-bad.com"), ioc("kept-bad.com", article_ids=["a"])])
    assert await stores.iocs.replace_iocs([ioc("kept-bad.com", article_ids=["b"]), ioc("new-bad.com")]) == 2
    assert await _values(stores) == {("domain", "kept-bad.com"), ("domain", "new-bad.com")}
    kept = await stores.iocs.get_ioc("domain", "kept-bad.com")
    assert kept is not None and kept.article_ids == ["b"]  # replaced, not merged with what was there
    assert await stores.iocs.replace_iocs([]) == 0 and await _values(stores) == set()


async def test_reprocess_applies_the_current_rules_and_a_second_run_writes_nothing(stores: Stores) -> None:
    # An article stored by an older rule set: it took the vendor's own site for an IOC and missed the C2.
    stale = article(1, title="New implant found", content=TEXT, iocs=[mention("lindqvistlabs.com")],
                    severity_score=2.0, severity_reasons=["old rules"], category="security-operations")
    quiet = article(2, title="Patch notes", content="The vendor shipped a new release with fixes.")
    await stores.articles.upsert_articles([stale, quiet])
    await stores.iocs.upsert_iocs(aggregate([stale], {}))
    assert ("domain", "lindqvistlabs.com") in await _values(stores)

    report = await reprocess(stores, {"Example News": "commercial"}, NOW)
    assert (report.articles, report.ioc_records) == (2, 1) and report.changed >= 1
    fresh = await stores.articles.get_article(stale.id)
    assert [(m.type, m.value) for m in fresh.iocs] == [("ipv4", "45.61.137.12")]
    assert fresh.severity_reasons[0].startswith("rubric level:") and fresh.modified_at == NOW
    assert fresh.published_at == stale.published_at and fresh.fetched_at == stale.fetched_at
    assert await _values(stores) == {("ipv4", "45.61.137.12")}
    record = await stores.iocs.get_ioc("ipv4", "45.61.137.12")
    assert record is not None and record.article_ids == [stale.id] and record.first_seen == stale.fetched_at
    # An article stored before its context existed gets its report (TAXII ctiwire-context) from the rebuild.
    reports = await stores.context.context_page(ContextQuery(types=("report",)))
    assert [o.facts["refs"] for o in reports] == [[object_id("ipv4", "45.61.137.12")]]

    version = await stores.iocs.data_version()
    again = await reprocess(stores, {"Example News": "commercial"}, NOW.replace(year=BASE.year + 1))
    assert again.changed == 0 and await stores.iocs.data_version() == version  # idempotent: nothing written
    assert (await stores.articles.get_article(stale.id)).modified_at == NOW
    assert await stores.articles.count_articles(every_article(), exact=True) == 2


async def test_reprocess_keeps_the_accounts_report_counts(stores: Stores) -> None:
    stale = article(3, title="New implant found", content=TEXT, iocs=[mention("lindqvistlabs.com")],
                    severity_score=2.0, severity_reasons=["old rules"])
    await stores.articles.upsert_articles([stale])
    await stores.iocs.upsert_iocs(aggregate([stale], {}))
    reports = [Sighting(str(n), user, "ipv4", "45.61.137.12", kind, BASE, BASE)
               for n, (user, kind) in enumerate([("ana", "seen"), ("bob", "seen"), ("cy", "false_positive")])]
    await stores.sightings.add_sightings(reports)  # reported before re-enrichment finds the value
    await reprocess(stores, {"Example News": "commercial"}, NOW)
    record = await stores.iocs.get_ioc("ipv4", "45.61.137.12")
    assert record is not None and (record.sightings, record.false_positives) == (2, 1)
