"""The spec's ``mitre-attack`` IOC type: ATT&CK technique ids as IOC records, aggregated from the
articles like the others, in the list, search, lookup, stats, TAXII and the exports that have a place for
them (STIX attack-pattern, a MISP text attribute, Sigma tags); ``/iocs?type=mitre-attack`` was a 400."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from conformance.factories import article

from ingest.aggregate import aggregate
from store.records import ArticleIoc, MitreTechnique, utcnow


async def _seed(server: Any) -> None:
    recent = utcnow() - timedelta(hours=3)
    reports = [article(n, published_at=recent, fetched_at=recent, modified_at=recent, created_at=recent,
                       mitre_techniques=[MitreTechnique("T1059.001", "PowerShell"),
                                         MitreTechnique("t1566", "Phishing")],
                       iocs=[ArticleIoc("domain", f"c2-{n}.bad-host.net")]) for n in range(3)]
    await server.ctx.articles.upsert_articles(reports)
    await server.ctx.iocs.upsert_iocs(aggregate(reports, {}))


async def test_techniques_are_records_in_the_list_search_lookup_and_stats(server) -> None:
    await _seed(server)
    async with server.client(server.pro_key) as http:
        listed = await http.get("/api/v1/iocs", params={"type": "mitre-attack"})
        found = await http.get("/api/v1/iocs/search", params={"q": "t1059.001"})
        wrong = await http.get("/api/v1/iocs/search", params={"q": "zz", "type": "mitre-attack"})
        lookup = await http.get("/api/v1/lookup", params={"value": "T1566"})
        stats = await http.get("/api/v1/iocs/stats", params={"window": "1d"})
    assert listed.status_code == 200
    assert sorted(r["value"] for r in listed.json()["data"]) == ["T1059.001", "T1566"]
    assert {r["type"] for r in listed.json()["data"]} == {"mitre-attack"}
    assert [r["value"] for r in found.json()["data"]] == ["T1059.001"]
    assert wrong.status_code == 400 and wrong.json()["error"]["details"]["parameter"] == "q"
    assert lookup.json()["found"] is True and lookup.json()["type"] == "mitre-attack"
    assert stats.json()["by_type"]["mitre-attack"] == 2


async def test_the_exports_place_techniques_where_the_format_has_a_place(server, check) -> None:
    await _seed(server)
    async with server.client(server.pro_key) as http:
        stix = await http.get("/api/v1/iocs/stix", params={"type": "mitre-attack,domain"})
        misp = await http.get("/api/v1/iocs/misp", params={"type": "mitre-attack"})
        sigma = await http.get("/api/v1/iocs/sigma")
        cef = await http.get("/api/v1/iocs/cef", params={"type": "mitre-attack"})
    bundle = check.stix(stix.content)  # stix2-validator (strict) and stix2.parse
    patterns = [o for o in bundle["objects"] if o["type"] == "attack-pattern"]
    assert sorted(p["name"] for p in patterns) == ["T1059.001", "T1566"]  # once each, records or mentions
    assert all(p["external_references"][0] == {"source_name": "mitre-attack", "external_id": p["name"],
                                               "url": p["external_references"][0]["url"]} for p in patterns)
    event = check.misp(misp.content)["Event"]  # PyMISP's schema and MISPAttribute(strict=True)
    assert {(a["type"], a["category"], a["value"]) for a in event["Attribute"]} == {
        ("text", "External analysis", "T1059.001"), ("text", "External analysis", "T1566")}
    assert not any(a["to_ids"] for a in event["Attribute"])  # context, not a detection
    rules = check.sigma(sigma.content, lambda issue: "EscapedWildcard" in type(issue).__name__)
    assert any("attack.t1059.001" in [str(t) for t in rule.tags] for rule in rules)
    assert len(check.cef(cef.content)) == 2


async def test_taxii_serves_techniques_as_attack_patterns(server) -> None:
    await _seed(server)
    async with server.client(server.pro_key) as http:
        page = await http.get("/api/taxii2/api/collections/attack-patterns/objects/",
                              headers={"Accept": "application/taxii+json;version=2.1"})
    assert page.status_code == 200
    assert sorted(o["name"] for o in page.json()["objects"]) == ["T1059.001", "T1566"]
    assert {o["type"] for o in page.json()["objects"]} == {"attack-pattern"}
