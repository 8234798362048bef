"""An IOC's articles, CVEs and techniques on every backend: the record lists the most recent few and counts
them all, the link relation holds every one (read newest first, by limit), and merges in any order or
concurrency end in the same record."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import orjson
from conformance.factories import at, ioc

from store.codec import bounded, merge_ioc, to_doc
from store.ports import IocStore
from store.query import IocQuery
from store.records import RECENT_LINKS
from store.sqlite import sqlite_stores
from store.sqlite.ioc_links import DONE_KEY


def report(n: int, value: str = "T1059") -> object:
    """Article ``n``'s report of one technique record, modified at minute ``n``."""
    return ioc(
        value,
        "mitre-attack",
        article_ids=[f"a{n:04d}"],
        cves=[f"CVE-2024-{n % 30}"],
        modified=at(minutes=n),
        last_seen=at(minutes=n),
    )


async def test_records_list_the_most_recent_few_and_count_every_link(iocs: IocStore) -> None:
    for start in range(0, 60, 10):  # six writes of ten articles each
        await iocs.upsert_iocs([report(n) for n in range(start, start + 10)])
    record = await iocs.get_ioc("mitre-attack", "T1059")
    assert record is not None
    assert (record.article_count, record.cve_count) == (60, 30)
    assert record.article_ids == sorted(f"a{n:04d}" for n in range(60 - RECENT_LINKS, 60))
    # CVE-2024-k was last reported by the article 30 + k: the twenty latest are k = 10..29.
    assert record.cves == sorted(f"CVE-2024-{k}" for k in range(10, 30))
    assert await iocs.ioc_links("mitre-attack", "T1059", "article", 3) == ["a0059", "a0058", "a0057"]
    everything = await iocs.ioc_links("mitre-attack", "T1059", "article", 1000)
    assert everything == [f"a{n:04d}" for n in reversed(range(60))]
    assert await iocs.ioc_links("mitre-attack", "T1059", "cve", 1) == ["CVE-2024-29"]
    assert await iocs.ioc_links("mitre-attack", "T9999", "article") == []
    api = orjson.loads(orjson.dumps(record.to_api()))
    assert (api["article_count"], len(api["article_ids"])) == (60, RECENT_LINKS)


async def test_a_rewritten_link_is_counted_once_and_moves_to_the_front(iocs: IocStore) -> None:
    await iocs.upsert_iocs([report(n) for n in range(30)])
    await iocs.upsert_iocs([report(n) for n in range(30)])  # the same reports again: nothing new
    again = report(2)
    again.modified = again.last_seen = at(minutes=99)
    await iocs.upsert_iocs([again])
    record = await iocs.get_ioc("mitre-attack", "T1059")
    assert record is not None and record.article_count == 30
    assert "a0002" in record.article_ids and "a0010" not in record.article_ids
    assert (await iocs.ioc_links("mitre-attack", "T1059", "article", 2)) == ["a0002", "a0029"]


async def test_bounded_merges_in_any_order_give_the_same_record(iocs: IocStore) -> None:
    reports = [report(n) for n in range(45)]
    want = reports[0]
    for r in reports[1:]:
        want = bounded(merge_ioc(want, r))
    backwards = reports[-1]
    for r in reversed(reports[:-1]):
        backwards = bounded(merge_ioc(r, backwards))
    # Counts of pure merges past the bound are estimates; the stores count from their relation.
    listed = ("article_ids", "cves", "link_seen", "modified", "first_seen")
    assert [getattr(backwards, f) for f in listed] == [getattr(want, f) for f in listed]
    await asyncio.gather(*(iocs.upsert_iocs(reports[k::5]) for k in range(5)))
    stored = await iocs.get_ioc("mitre-attack", "T1059")
    assert stored is not None
    assert (stored.article_ids, stored.cves, stored.link_seen) == (want.article_ids, want.cves, want.link_seen)
    assert (stored.article_count, stored.cve_count) == (45, 30)


async def test_replace_rebuilds_the_relation(iocs: IocStore) -> None:
    await iocs.upsert_iocs([report(n) for n in range(30)])
    await iocs.replace_iocs([report(n) for n in range(5)] + [report(1, "T1566")])
    record = await iocs.get_ioc("mitre-attack", "T1059")
    assert record is not None and record.article_count == 5
    assert await iocs.ioc_links("mitre-attack", "T1059", "article", 100) == [
        "a0004",
        "a0003",
        "a0002",
        "a0001",
        "a0000",
    ]
    assert await iocs.ioc_links("mitre-attack", "T1566", "article") == ["a0001"]
    assert await iocs.count_iocs(IocQuery()) == 2


async def test_an_older_database_moves_its_lists_into_the_relation(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    stores = sqlite_stores(path)
    await stores.open()
    await stores.iocs.upsert_iocs([ioc("evil.example")])
    await stores.close()
    full = ioc("evil.example", article_ids=[f"a{n:03d}" for n in range(50)], techniques=["T1059", "T1566"])
    with sqlite3.connect(path) as db:  # as a release that kept every link in the document left it
        db.execute(
            "UPDATE iocs SET doc = ?",
            (orjson.dumps({k: v for k, v in to_doc(full).items() if not k.endswith("_count") and k != "link_seen"}),),
        )
        db.execute("DELETE FROM meta WHERE key = ?", (DONE_KEY,))
    stores = sqlite_stores(path)
    await stores.open()
    try:
        record = await stores.iocs.get_ioc("domain", "evil.example")
        assert record is not None and (record.article_count, record.technique_count) == (50, 2)
        assert len(record.article_ids) == RECENT_LINKS and record.techniques == ["T1059", "T1566"]
        assert len(await stores.iocs.ioc_links("domain", "evil.example", "article", 100)) == 50
        page = [orjson.loads(r) async for b in stores.iocs.iter_ioc_rows(IocQuery()) for r in b]
        assert page[0]["article_count"] == 50 and len(page[0]["article_ids"]) == RECENT_LINKS
    finally:
        await stores.close()
    reopened = sqlite_stores(path)  # a second open finds nothing to move
    await reopened.open()
    try:
        again = await reopened.iocs.get_ioc("domain", "evil.example")
        assert again is not None and again.article_count == 50
    finally:
        await reopened.close()


async def test_a_relation_keyed_by_type_and_value_moves_to_the_rowid_key(tmp_path: Path) -> None:
    path = tmp_path / "text-keyed.sqlite3"
    stores = sqlite_stores(path)
    await stores.open()
    await stores.iocs.upsert_iocs([report(n) for n in range(30)] + [report(1, "T1566")])
    await stores.close()
    with sqlite3.connect(path) as db:  # as a release that keyed links by (type, value) left them
        db.execute(
            "CREATE TABLE ioc_links (type TEXT NOT NULL, value TEXT NOT NULL, kind TEXT NOT NULL, ref TEXT NOT NULL,"
            " seen TEXT NOT NULL, PRIMARY KEY (type, value, kind, ref)) WITHOUT ROWID"
        )
        db.execute(
            "INSERT INTO ioc_links SELECT i.type, i.value, r.kind, r.ref, r.seen FROM ioc_refs r JOIN iocs i"
            " ON i.rowid = r.ioc"
        )
        db.execute("DELETE FROM ioc_refs")
    stores = sqlite_stores(path)
    await stores.open()
    try:
        links = await stores.iocs.ioc_links("mitre-attack", "T1059", "article", 100)
        assert links == [f"a{n:04d}" for n in reversed(range(30))]
        assert await stores.iocs.ioc_links("mitre-attack", "T1566", "cve") == ["CVE-2024-1"]
        await stores.iocs.upsert_iocs([report(30)])  # the moved links count as known: one new article
        record = await stores.iocs.get_ioc("mitre-attack", "T1059")
        assert record is not None and record.article_count == 31
    finally:
        await stores.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT 1 FROM sqlite_master WHERE name = 'ioc_links'").fetchone() is None
