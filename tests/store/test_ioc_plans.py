"""The SQLite statements behind the IOC pages, totals, stats and links use the indexes made for them:
each statement a store call runs is traced and its plan read with EXPLAIN QUERY PLAN, so a page of one
type walks (type, first_seen, value) instead of sorting the type, whatever the data's size."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from store.decay import clock
from store.ports import Stores
from store.query import IocFilters, IocQuery
from store.records import Ioc, utcnow
from store.sqlite import sqlite_stores
from store.stix_context import ContextQuery, relationship


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    opened = sqlite_stores(tmp_path / "plans.sqlite3")
    await opened.open()
    now = utcnow()
    rows = [
        Ioc(
            ("domain", "ipv4", "url")[n % 3],
            f"v{n}.example",
            "medium",
            "F",
            "commercial",
            now - timedelta(hours=n),
            now - timedelta(hours=n),
            now - timedelta(hours=n),
            sources=["F"],
            article_ids=[f"a{n}"],
        )
        for n in range(300)
    ]
    await opened.iocs.upsert_iocs(rows)
    yield opened
    await opened.close()


async def plans(stores: Stores, call: Callable[[], Awaitable[Any]], table: str = "ioc") -> dict[str, str]:
    """SQL text -> its query plan (one line per step), for every read of ``table`` (IOCs) ``call`` makes."""
    conn: Any = stores.lifecycle
    seen: list[str] = []
    for db in (conn._db, conn._reader):
        db.set_trace_callback(seen.append)
    try:
        await call()
    finally:
        for db in (conn._db, conn._reader):
            db.set_trace_callback(None)
    probe = sqlite3.connect(conn.path)
    try:
        return {
            sql: " | ".join(row[3] for row in probe.execute("EXPLAIN QUERY PLAN " + sql))
            for sql in seen
            if sql.lstrip().upper().startswith("SELECT") and table in sql
        }
    finally:
        probe.close()


def only(found: dict[str, str], needle: str) -> str:
    matching = [plan for sql, plan in found.items() if needle in sql]
    assert len(matching) >= 1, found
    return matching[0]


async def read_page(stores: Stores, query: IocQuery) -> None:
    async for _ in stores.iocs.iter_ioc_rows(query):
        pass


async def read_records(stores: Stores, query: IocQuery) -> None:
    async for _ in stores.iocs.iter_iocs(query, query.limit):
        pass


@pytest.mark.parametrize(("types", "index"), [(("domain",), "iocs_type_page_status"), ((), "iocs_page_status")])
async def test_a_long_window_page_walks_the_page_order(stores: Stores, types: tuple[str, ...], index: str) -> None:
    query = IocQuery(types=types, since=utcnow() - timedelta(days=365), limit=100)
    plan = only(await plans(stores, lambda: read_page(stores, query)), "ORDER BY first_seen")
    assert f"USING INDEX {index}" in plan and "TEMP B-TREE" not in plan, plan


@pytest.mark.parametrize(("types", "modified", "expired"), [
    ((), "iocs_modified_status", "iocs_valid_until_page"),
    (("domain",), "iocs_type_modified_status", "iocs_type_valid_until_page"),
    (("domain", "url"), "iocs_modified_status", "iocs_valid_until_page"),
])
async def test_a_taxii_page_merges_two_ordered_index_walks(stores: Stores, types: tuple[str, ...], modified: str,
                                                           expired: str) -> None:
    """A page in date_added order (a TAXII poll from a ``next`` position): the records dated by their modified and
    those dated by their expiry, each walked off its index from the position, merged; nothing sorted."""
    now = clock(utcnow())
    query = IocFilters(types=types).query(poll=True, now=now, floor=now - timedelta(days=365),
                                          added_after=now - timedelta(days=30), added_order=True, limit=21,
                                          after=(now - timedelta(hours=100), "domain", "v100.example"))
    plan = only(await plans(stores, lambda: read_records(stores, query)), "UNION ALL")
    assert "MERGE (UNION ALL)" in plan and "TEMP B-TREE" not in plan and "SCAN" not in plan, plan
    left, right = plan.split("RIGHT")
    assert f"USING INDEX {modified} (" in left and f"USING INDEX {expired} (" in right, plan
    assert ">(?," in left and ">(?," in right, plan  # each walk starts at the position


async def test_a_severity_filtered_page_still_walks_the_page_order(stores: Stores) -> None:
    query = IocQuery(severities=("critical", "high"), since=utcnow() - timedelta(days=365), limit=100)
    plan = only(await plans(stores, lambda: read_page(stores, query)), "ORDER BY first_seen")
    assert "USING INDEX iocs_page_status" in plan and "TEMP B-TREE" not in plan, plan


async def test_a_short_window_page_searches_by_modified(stores: Stores) -> None:
    query = IocQuery(types=("domain",), since=utcnow() - timedelta(hours=20), limit=100)
    plan = only(await plans(stores, lambda: read_page(stores, query)), "ORDER BY first_seen")
    assert "USING INDEX iocs_type_modified_status (type=? AND modified>?)" in plan, plan


async def test_a_page_and_total_by_status_check_it_in_the_index(stores: Stores) -> None:
    """The default lists' ``status=active``: the walk skips expired and revoked records by their index entries
    and the capped total counts index entries alone, whatever share of the window has expired."""
    query = IocQuery(types=("domain",), statuses=("active",), since=utcnow() - timedelta(days=365), limit=100)
    page = only(await plans(stores, lambda: read_page(stores, query)), "ORDER BY first_seen")
    assert "USING INDEX iocs_type_page_status" in page and "TEMP B-TREE" not in page, page
    counted = only(await plans(stores, lambda: stores.iocs.estimate_iocs(query)), "count(*)")
    assert "USING COVERING INDEX iocs_type_modified_status (type=? AND modified>?)" in counted, counted
    assert "TEMP B-TREE" not in counted, counted  # newest first, in the index's order
    every_type = replace(query, types=())
    counted = only(await plans(stores, lambda: stores.iocs.estimate_iocs(every_type)), "count(*)")
    assert "USING COVERING INDEX iocs_modified_status (modified>?)" in counted and "TEMP B-TREE" not in counted, counted


async def test_estimated_totals_read_the_counters_and_one_partial_hour(stores: Stores) -> None:
    query = IocQuery(types=("domain",), since=utcnow() - timedelta(days=30))
    found = await plans(stores, lambda: stores.iocs.estimate_iocs(query))
    assert "INDEX iocs_type_modified_status (type=? AND modified>? AND modified<?)" in only(found, "count(*)")
    assert "ioc_day_counts USING PRIMARY KEY (day>? AND day<?)" in only(found, "ioc_day_counts")
    assert "ioc_month_counts USING PRIMARY KEY (month>?)" in only(found, "ioc_month_counts")
    assert "ioc_hour_groups USING PRIMARY KEY (hour>? AND hour<?)" in only(found, "ioc_hour_groups")


async def test_stats_read_the_counters(stores: Stores) -> None:
    """A year's window reads its months' source counters and its days' totals, each by its key's range."""
    found = await plans(stores, lambda: stores.iocs.ioc_stats(utcnow() - timedelta(days=365)))
    sources = only(found, "FROM ioc_day_sources")
    assert "ioc_day_sources USING PRIMARY KEY (day>? AND day<?)" in sources, sources
    assert "ioc_month_sources USING PRIMARY KEY (month>?)" in sources, sources
    series = only(found, "FROM ioc_hour_counts")
    assert "ioc_hour_counts USING PRIMARY KEY (hour>? AND hour<?)" in series, series
    assert "ioc_day_totals USING PRIMARY KEY (day>?)" in series, series
    assert all("SCAN iocs" not in plan for plan in found.values()), found


async def test_recent_links_come_off_their_index(stores: Stores) -> None:
    found = await plans(stores, lambda: stores.iocs.ioc_links("domain", "v0.example", "article", 5))
    plan = only(found, "FROM ioc_refs")
    assert "USING COVERING INDEX ioc_refs_recent" in plan and "TEMP B-TREE" not in plan, plan


async def test_a_substring_search_goes_through_the_trigram_index(stores: Stores) -> None:
    query = IocQuery(types=("domain", "url"), value_contains="v12.exa", since=utcnow() - timedelta(days=365))
    found = await plans(stores, lambda: read_page(stores, query))
    plan = only(found, "ORDER BY first_seen")
    assert "VIRTUAL TABLE INDEX" in plan and "SCAN iocs " not in plan + " ", plan
    # The matches are read by rowid, not found by walking every record of the types.
    assert "SEARCH iocs USING INTEGER PRIMARY KEY (rowid=?)" in plan, plan
    counted = await plans(stores, lambda: stores.iocs.estimate_iocs(query))
    assert "SEARCH iocs USING INTEGER PRIMARY KEY (rowid=?)" in only(counted, "count(*)"), counted
    prefix = await plans(stores, lambda: read_page(stores, IocQuery(types=("domain",), value_contains="v1")))
    assert "USING INDEX sqlite_autoindex_iocs_1 (type=? AND value>? AND value<?)" in only(prefix, "ORDER BY"), prefix


async def test_a_substring_search_looks_up_its_rarest_trigrams(stores: Stores) -> None:
    # Every value ends in ".example": its trigrams are in all 300 values, "12." in 3, "v12" in 11, "2.e" in 30.
    query = IocQuery(value_contains="v12.example")
    found = await plans(stores, lambda: read_page(stores, query))
    search = next(sql for sql in found if "ORDER BY first_seen" in sql)
    assert 'MATCH \'"12." AND "v12" AND "2.e"\'' in search, search
    assert [r async for batch in stores.iocs.iter_iocs(query) for r in batch][0].value == "v12.example"


@pytest.mark.parametrize(("types", "index"), [(("report",), "stix_context_type_added"), ((), "stix_context_added")])
async def test_context_pages_walk_their_order_from_the_position(stores: Stores, types: tuple[str, ...],
                                                                index: str) -> None:
    facts = [relationship(f"indicator--{n}", "indicates", "intrusion-set--x") for n in range(50)]
    await stores.context.put_context(facts)
    query = ContextQuery(added_after=utcnow() - timedelta(days=1), after=(utcnow(), "relationship--0"), types=types,
                         limit=101)
    plan = only(await plans(stores, lambda: stores.context.context_page(query), "stix_context"), "ORDER BY date_added")
    assert f"USING INDEX {index}" in plan and "TEMP B-TREE" not in plan and "SCAN" not in plan, plan


async def test_a_merge_leaves_the_stix_id_index_alone(stores: Stores) -> None:
    """SQLite rewrites the index entries of every column an UPDATE sets: a merge does not set the stix_id
    (made from the type and value), whose index would cost a random page per merged record."""
    known = await stores.iocs.get_ioc("domain", "v0.example")
    assert known is not None
    conn: Any = stores.lifecycle
    seen: list[str] = []
    conn._db.set_trace_callback(seen.append)
    now = utcnow()
    report = Ioc("domain", "v0.example", "high", "G", "government", now, now, now, sources=["G"], article_ids=["b0"])
    try:
        await stores.iocs.upsert_iocs([report])
    finally:
        conn._db.set_trace_callback(None)
    updates = [sql for sql in seen if sql.startswith("UPDATE iocs SET")]
    assert updates and all("stix_id" not in sql for sql in updates), seen
    merged = await stores.iocs.get_ioc("domain", "v0.example")
    assert merged is not None and merged.stix_id == known.stix_id and merged.confidence == "high"
    found = await stores.iocs.all_iocs(IocQuery(stix_ids=(known.stix_id,)))
    assert [r.value for r in found] == ["v0.example"]
