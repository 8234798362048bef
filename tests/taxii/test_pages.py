"""Reading pages from a real SQLite store: keyset positions, ids read by index, bounded scans for version
timestamps."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from exporters.base import ExportContext
from exporters.stix import stix_object
from store.ports import Stores
from store.records import Ioc, utcnow
from taxii.filters import Filters, Matcher
from taxii.page_query import Page, PageSpec, context_maker, read_page


async def _walk(stores: Stores, rows: list[Ioc], filters: Filters, limit: int, budget: int) -> list[Page]:
    floor = utcnow() - timedelta(days=365)
    contexts = context_maker(stores.articles, utcnow(), floor, "pro")
    spec = PageSpec(None, floor, None, limit, Matcher(filters), unique_ids=len(filters.ids), budget=budget)
    pages = [await read_page(stores.iocs, stores.context, spec, contexts)]
    while pages[-1].more:
        spec = PageSpec(None, floor, pages[-1].resume_at, limit, Matcher(filters), len(filters.ids), budget)
        pages.append(await read_page(stores.iocs, stores.context, spec, contexts))
        assert len(pages) < 100
    return pages


async def test_plain_pages_are_full_and_continue_after_the_last_object(stores, iocs) -> None:
    rows = iocs(25)
    await stores.iocs.upsert_iocs(rows)
    pages = await _walk(stores, rows, Filters(), limit=10, budget=10_000)
    assert [len(p.items) for p in pages] == [10, 10, 5] and [p.more for p in pages] == [True, True, False]
    assert pages[0].resume_at is not None and pages[0].resume_at.value == pages[0].items[-1][0].value
    assert [i.value for p in pages for i, _ in p.items] == [r.value for r in rows]


async def test_id_filters_read_only_the_records_asked_for(stores, iocs) -> None:
    rows = iocs(40)
    await stores.iocs.upsert_iocs(rows)
    wanted = [stix_object(rows[3]), stix_object(rows[33])]
    ids = tuple(sorted(o["id"] for o in wanted))
    pages = await _walk(stores, rows, Filters(ids=ids), limit=1, budget=8)
    # The store returns the two records by index: no empty pages between them, whatever the budget.
    assert [[o for _, o in p.items] for p in pages] == [[wanted[0]], [wanted[1]]]
    assert [p.more for p in pages] == [True, False]


async def test_version_timestamps_scan_a_bounded_number_of_records_per_page(stores, iocs) -> None:
    rows = iocs(40)
    await stores.iocs.upsert_iocs(rows)
    ctx = ExportContext(utcnow(), utcnow(), utcnow(), "pro", {})
    wanted = [stix_object(rows[n], ctx)["modified"].replace("Z", "000Z") for n in (3, 33)]
    pages = await _walk(stores, rows, Filters(versions=tuple(sorted(wanted))), limit=2, budget=8)
    assert [o["id"] for p in pages for _, o in p.items] == [stix_object(rows[n])["id"] for n in (3, 33)]
    assert pages[1].items == [] and pages[1].more  # an empty page that is not the end: more with a next
    # 8 records a page: 0-7 finds one version, 32-39 the other; the scan runs to the budget, and the
    # 40th record ending it exactly leaves one empty final page.
    assert len(pages) == 6 and pages[-1] == Page([], False)


async def test_id_filters_fetch_articles_only_for_the_records_asked_for(stores, iocs) -> None:
    rows = iocs(30)
    await stores.iocs.upsert_iocs(rows)
    floor = utcnow() - timedelta(days=365)
    make = context_maker(stores.articles, utcnow(), floor, "pro")
    asked: list[Ioc] = []

    async def contexts(batch: Sequence[Ioc]) -> ExportContext:
        asked.extend(batch)
        return await make(batch)

    wanted = stix_object(rows[17])
    spec = PageSpec(None, floor, None, 10, Matcher(Filters(ids=(wanted["id"],))), unique_ids=1, budget=100)
    page = await read_page(stores.iocs, stores.context, spec, contexts)
    assert [o for _, o in page.items] == [wanted] and not page.more
    assert [i.value for i in asked] == [rows[17].value]


async def test_version_timestamps_decide_on_the_built_object(stores, iocs) -> None:
    rows = iocs(12)
    await stores.iocs.upsert_iocs(rows)
    ctx = ExportContext(utcnow(), utcnow(), utcnow(), "pro", {})
    version = stix_object(rows[5], ctx)["modified"]
    pages = await _walk(stores, rows, Filters(versions=(version.replace("Z", "000Z"),)), limit=5, budget=100)
    assert [o["modified"] for p in pages for _, o in p.items] == [version]


async def test_nothing_can_match_reads_nothing(stores, iocs) -> None:
    await stores.iocs.upsert_iocs(iocs(5))
    floor = utcnow() - timedelta(days=1)
    spec = PageSpec((), floor, None, 10, Matcher(Filters()))
    contexts = context_maker(stores.articles, utcnow(), floor, "pro")
    assert await read_page(stores.iocs, stores.context, spec, contexts) == Page([], False)
