"""The STIX export on every backend: a bundle with context (reports, intrusion sets, malware, markings)
whose size follows its record count, however many articles, CVEs and techniques stand behind each record."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

import orjson
import pytest
from conformance.factories import article, at, mention, technique
from stix_support import dangling_refs, validate_stix

from exporters import precompute
from exporters.base import candidate_articles
from exporters.caps import (
    ARTICLES_PER_RECORD,
    CVES_PER_RECORD,
    STIX_BYTES_PER_RECORD,
    STIX_FIXED_BYTES,
    TECHNIQUES_PER_RECORD,
)
from exporters.stix import TLP_CLEAR_ID
from ingest.aggregate import aggregate
from store.ports import Stores
from store.query import IocQuery
from store.records import Article

ARTICLES = 240
HOT = ("45.153.160.7", "45.153.160.8", "45.153.160.9")  # named by every article (on no warninglist)
TECHNIQUES = [f"T{1000 + n}" for n in range(12)]
LIMIT = 100
BOUND = 500_000


def heavy_article(n: int) -> Article:
    """Article ``n``: the hot addresses and a domain of its own, 25 CVEs no other article names, six
    techniques, a known actor and one of its own, and a long title."""
    return article(
        n,
        title=f"Report {n}: " + "long title " * 40,
        iocs=[*(mention(ip, "ipv4") for ip in HOT), mention(f"c2-{n}.bad.example")],
        cve_ids=[f"CVE-2025-{10000 + n * 25 + k}" for k in range(25)],
        mitre_techniques=[technique(TECHNIQUES[(n + k) % 12]) for k in range(6)],
        threat_actors=[("apt28", "lockbit", "kimsuky")[n % 3], f"cluster {n}"],
    )


@pytest.fixture
async def heavy(stores: Stores) -> Stores:
    rows = [heavy_article(n) for n in range(ARTICLES)]
    await stores.articles.upsert_articles(rows)
    await stores.iocs.upsert_iocs(aggregate(rows, {}))
    return stores


async def _bundle(stores: Stores, validate: bool = False) -> tuple[bytes, dict[str, Any]]:
    """The 100-record export; held to the validators once (they take seconds on a bundle this size)."""
    request = precompute.ExportRequest("stix", "pro", "365d", limit=LIMIT)
    entry = await precompute.build_export(stores, request, at(days=2), 1)
    assert entry.meta.rows == LIMIT
    return entry.body, validate_stix(entry.body) if validate else orjson.loads(entry.body)


async def test_a_hundred_records_stay_under_the_bound(heavy: Stores) -> None:
    body, bundle = await _bundle(heavy, validate=True)
    assert len(body) <= STIX_BYTES_PER_RECORD * LIMIT + STIX_FIXED_BYTES < BOUND
    objects = bundle["objects"]
    assert not dangling_refs(objects)
    ids = {o["id"] for o in objects}
    reports = [o for o in objects if o["type"] == "report"]
    assert reports and all(o["object_refs"] and set(o["object_refs"]) <= ids for o in reports)
    assert all(o.get("object_marking_refs") == [TLP_CLEAR_ID] for o in objects if o["type"] != "marking-definition")
    rerun, _ = await _bundle(heavy)
    assert rerun == body  # deterministic ids and order


async def test_each_record_brings_capped_context(heavy: Stores) -> None:
    _body, bundle = await _bundle(heavy)
    objects = bundle["objects"]
    by_id = {o["id"]: o for o in objects}
    links = Counter((r["source_ref"], by_id[r["target_ref"]]["type"]) for r in objects if r["type"] == "relationship")
    indicators = [o for o in objects if o["type"] == "indicator"]
    cited = Counter(ref for o in objects if o["type"] == "report" for ref in o["object_refs"])
    for ind in indicators:
        assert links[(ind["id"], "vulnerability")] <= CVES_PER_RECORD
        assert links[(ind["id"], "attack-pattern")] <= TECHNIQUES_PER_RECORD
        assert cited[ind["id"]] <= ARTICLES_PER_RECORD and len(ind.get("external_references", [])) <= 3
    hot = [o for o in indicators if o["name"].removeprefix("ipv4: ") in HOT]
    assert len(hot) == 3 and all(cited[o["id"]] >= 1 for o in hot)  # the first report comes before the rest


async def test_reports_are_the_most_recent_articles_read(heavy: Stores) -> None:
    _body, bundle = await _bundle(heavy)
    [record] = await heavy.iocs.all_iocs(IocQuery(types=("ipv4",), values=(HOT[0],), limit=1))
    read = [heavy_article(int(uuid.UUID(a))) for a in candidate_articles(record)]
    newest = [a.id for a in sorted(read, key=lambda a: a.published_at, reverse=True)[:ARTICLES_PER_RECORD]]
    reports = [o for o in bundle["objects"] if o["type"] == "report" and record.stix_id in o["object_refs"]]
    cited = {r["external_references"][0]["external_id"] for r in reports}
    assert newest[0] in cited and cited <= set(newest)  # the newest first; others as the allowance lets them


async def test_actors_malware_and_reports(heavy: Stores) -> None:
    _body, bundle = await _bundle(heavy)
    objects = bundle["objects"]
    actors = {o["name"]: o for o in objects if o["type"] == "intrusion-set"}
    apt28, lockbit = actors["APT28"], actors["LockBit"]  # the galaxy's spellings and synonyms
    assert "FANCY BEAR" in apt28["aliases"] and "cluster 7" in actors
    family = next(o for o in objects if o["type"] == "malware" and o["name"] == "LockBit")  # the brand's family
    assert family["is_family"] is True
    rels = {(r["source_ref"], r["relationship_type"], r["target_ref"]) for r in objects if r["type"] == "relationship"}
    assert (lockbit["id"], "uses", family["id"]) in rels
    assert any(kind == "indicates" and target == apt28["id"] for _s, kind, target in rels)
    # The galaxy's suspected state sponsor: APT28 attributed-to a nation-state threat actor; LockBit has none.
    russia = next(o for o in objects if o["type"] == "threat-actor")
    assert russia["name"] == "Russian Federation" and russia["threat_actor_types"] == ["nation-state"]
    assert (apt28["id"], "attributed-to", russia["id"]) in rels
    assert not any(s == lockbit["id"] and kind == "attributed-to" for s, kind, _t in rels)
    report = next(o for o in objects if o["type"] == "report")
    [ref] = report["external_references"]
    assert ref["url"].startswith("https://news.example/") and len(report["name"]) <= 160
