"""The reports, intrusion sets, malware and relationships around the records, read through TAXII with
taxii2-client on every backend: strict-valid, every reference resolved, paged once each, polled soundly."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from mongo_support import backend_stores, server_backends
from taxii2client.v21 import Collection, as_pages

from ingest.aggregate import aggregate
from ingest.stix_context import context_facts
from store.records import Article, ArticleIoc, utcnow
from taxii.collections import CONTEXT
from tests.stix_support import dangling_refs
from tests.support import RunningServer, make_settings, start_server, stop_server

OBJECTS = f"/api/taxii2/api/collections/{CONTEXT}/"
ACTORS = (["lockbit"], ["apt28", "fin7"], [])


@pytest.fixture(params=server_backends())
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RunningServer]:
    running = await start_server(make_settings(tmp_path), backend_stores(request.param))
    yield running
    await stop_server(running)


def news(n: int, extra: int = 0) -> Article:
    """Article ``n``: two indicators and a CVE (``extra`` more domains), actors by ``n``."""
    now = utcnow() - timedelta(hours=1)
    mentions = [
        ArticleIoc("ipv4", f"45.153.160.{n}"),  # a range no warninglist names
        ArticleIoc("domain", f"c2-{n}.bad.example"),
        ArticleIoc("cve", f"CVE-2025-{1000 + n}"),
        *(ArticleIoc("domain", f"more-{n}-{k}.bad.example") for k in range(extra)),
    ]
    return Article(
        str(uuid.UUID(int=n + 1)),
        f"Campaign {n}",
        f"https://news.example/{n}",
        f"https://news.example/{n}",
        "summary",
        now,
        now,
        now + timedelta(seconds=extra),
        now,
        "Example News",
        threat_actors=ACTORS[n % 3],
        iocs=mentions,
        content_hash=f"h{n}-{extra}",
    )


async def store(server: RunningServer, articles: list[Article]) -> None:
    """What a collection run writes (ingest.pipeline): records, articles, then their context facts."""
    stores = server.ctx.stores
    await stores.iocs.upsert_iocs(aggregate(articles, {"Example News": "commercial"}))
    await stores.articles.upsert_articles(articles)
    await stores.context.put_context(context_facts(articles))


def collection(server: RunningServer, cid: str = CONTEXT) -> Collection:
    """As Sentinel and OpenCTI connect: the key as the Basic password."""
    return Collection(f"{server.url}/api/taxii2/api/collections/{cid}/", user="siem", password=server.pro_key)


def walk(server: RunningServer, cid: str = CONTEXT, per_request: int = 5, **filters: Any) -> list[dict[str, Any]]:
    pages = as_pages(collection(server, cid).get_objects, per_request=per_request, **filters)
    return [obj for page in pages for obj in page.get("objects", [])]


async def test_taxii2_client_reads_the_graph_once_each_valid_and_resolved(server, stix_valid) -> None:
    await store(server, [news(n) for n in range(6)])
    context = await asyncio.to_thread(walk, server)
    assert len(context) == len({o["id"] for o in context})  # paging by next returns every object once
    for size in (1, 3, 1000):
        assert await asyncio.to_thread(walk, server, CONTEXT, size) == context
    kinds = {o["type"] for o in context}
    kinds_expected = {"identity", "marking-definition", "report", "intrusion-set", "malware", "threat-actor"}
    assert kinds == kinds_expected | {"relationship"}
    assert sum(o["type"] == "report" for o in context) == 6
    kinds_of_links = {o["relationship_type"] for o in context if o["type"] == "relationship"}
    assert kinds_of_links == {"indicates", "uses", "targets", "attributed-to"}
    stix_valid(context)
    records = await asyncio.to_thread(walk, server, "all-iocs", 50)
    assert dangling_refs(records + context) == set()  # a client polling both resolves every reference
    lockbit = next(o for o in context if o["type"] == "intrusion-set" and o["name"].lower() == "lockbit")
    assert any(o["type"] == "malware" and o["name"] == "LockBit" for o in context)
    assert any(o.get("source_ref", "").startswith("indicator--") and o["target_ref"] == lockbit["id"] for o in context)
    # APT28 is attributed to the state the MISP galaxy names as its suspected sponsor (STIX 2.1 Appendix B).
    apt28 = next(o for o in context if o["type"] == "intrusion-set" and o["name"].lower() == "apt28")
    russia = next(o for o in context if o["type"] == "threat-actor")
    assert russia["name"] == "Russian Federation" and russia["threat_actor_types"] == ["nation-state"]
    assert any(o.get("relationship_type") == "attributed-to" and (o["source_ref"], o["target_ref"])
               == (apt28["id"], russia["id"]) for o in context)


async def test_a_poll_from_the_last_date_added_gets_new_and_changed_objects_only(server, stix_valid) -> None:
    await store(server, [news(n) for n in range(3)])
    async with server.client(server.pro_key) as http:
        first = await http.get(OBJECTS + "objects/")
        last = first.headers["X-TAXII-Date-Added-Last"]
        before = {o["id"]: o for o in first.json()["objects"]}
        await store(server, [news(1, extra=2), news(3)])  # article 1 changed, article 3 new
        poll = await http.get(OBJECTS + "objects/", params={"added_after": last})
        again = await http.get(OBJECTS + "objects/", params={"added_after": poll.headers["X-TAXII-Date-Added-Last"]})
        manifest = await http.get(OBJECTS + "manifest/", params={"added_after": last})
    new = poll.json()["objects"]
    stix_valid(new)
    assert poll.headers["X-TAXII-Date-Added-First"] > last and again.json() == {"more": False}
    changed = [o for o in new if o["id"] in before]
    assert [o["type"] for o in changed] == ["report"]  # the one object whose facts changed: a new version
    old = before[changed[0]["id"]]
    assert changed[0]["created"] == old["created"] and changed[0]["modified"] > old["modified"]
    assert len(changed[0]["object_refs"]) == len(old["object_refs"]) + 2
    assert {o["type"] for o in new if o["id"] not in before} >= {"report", "relationship"}
    assert [m["id"] for m in manifest.json()["objects"]] == [o["id"] for o in new]
    assert all(m["version"] == o["modified"] for m, o in zip(manifest.json()["objects"], new, strict=True))


async def test_match_filters_object_and_versions_endpoints(server) -> None:
    await store(server, [news(n) for n in range(4)])
    async with server.client(server.pro_key) as http:
        reports = (await http.get(OBJECTS + "objects/", params={"match[type]": "report", "limit": "2"})).json()
        rest = (await http.get(OBJECTS + "objects/", params={"match[type]": "report", "next": reports["next"]})).json()
        report = reports["objects"][0]
        one = await http.get(f"{OBJECTS}objects/{report['id']}/")
        versions = await http.get(f"{OBJECTS}objects/{report['id']}/versions/")
        exact = await http.get(
            OBJECTS + "objects/", params={"match[version]": report["modified"], "match[id]": report["id"]}
        )
        other = await http.get(
            OBJECTS + "objects/", params={"match[version]": "2001-01-01T00:00:00Z", "match[id]": report["id"]}
        )
        several = await http.get(OBJECTS + "objects/", params={"match[type]": "malware,intrusion-set"})
    assert reports["more"] and len(reports["objects"]) == 2 and len(rest["objects"]) == 2 and not rest["more"]
    assert one.json()["objects"] == [report] and one.headers["X-TAXII-Date-Added-First"]
    assert versions.json() == {"more": False, "versions": [report["modified"]]}
    assert exact.json()["objects"] == [report] and other.json() == {"more": False}
    assert {o["type"] for o in several.json()["objects"]} == {"malware", "intrusion-set"}
