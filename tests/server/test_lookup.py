"""GET /api/v1/iocs/search and /api/v1/lookup through real HTTP."""

from __future__ import annotations

from datetime import timedelta

from store.records import Ioc, utcnow


def _ioc(kind: str, value: str, hours: float = 2.0) -> Ioc:
    seen = utcnow() - timedelta(hours=hours)
    return Ioc(kind, value, "high", "CISA", "government", seen, seen, seen, sources=["CISA", "Talos"],
               cves=["CVE-2024-3400"], techniques=["T1071.001"])


async def test_search_finds_defanged_queries_and_substrings(server) -> None:
    await server.ctx.iocs.upsert_iocs([_ioc("domain", "c2.evil-host.net"), _ioc("ipv4", "198.51.100.9"),
                                        _ioc("url", "http://c2.evil-host.net/gate.php")])
    async with server.client(server.free_key) as http:
        exact = await http.get("/api/v1/iocs/search", params={"q": "198.51.100[.]9"})
        partial = await http.get("/api/v1/iocs/search", params={"q": "evil-host[.]net"})
        only_urls = await http.get("/api/v1/iocs/search", params={"q": "evil-host.net", "type": "url"})
        missing = await http.get("/api/v1/iocs/search")
    assert exact.status_code == 200, exact.text
    assert [r["value"] for r in exact.json()["data"]] == ["198.51.100.9"]
    assert {r["value"] for r in partial.json()["data"]} == {"c2.evil-host.net", "http://c2.evil-host.net/gate.php"}
    assert [r["type"] for r in only_urls.json()["data"]] == ["url"]
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "invalid_parameter"


async def test_lookup_explains_a_known_indicator(server) -> None:
    await server.ctx.iocs.upsert_iocs([_ioc("domain", "c2.evil-host.net")])
    async with server.client(server.free_key) as http:
        found = await http.get("/api/v1/lookup", params={"value": "C2[.]EVIL-HOST[.]NET"})
    body = found.json()
    assert found.status_code == 200 and body["found"] is True and body["type"] == "domain"
    assert body["value"] == "c2.evil-host.net" and body["reporting_sources"] == ["CISA", "Talos"]
    assert 0 <= body["risk"]["score"] <= 100 and body["risk"]["factors"]
    assert body["cves"] == ["CVE-2024-3400"] and body["related_articles"] == []
    # no related article names the technique: the ATT&CK catalogue does
    assert body["mitre_techniques"] == [{"id": "T1071.001", "name": "Web Protocols"}]
    assert 'c2.evil-host.net' in body["hunting_queries"]["splunk_spl"]


async def test_lookup_of_unknown_and_unrecognised_values(server) -> None:
    async with server.client(server.free_key) as http:
        unknown = await http.get("/api/v1/lookup", params={"value": "203.0.113.200"})
        garbage = await http.get("/api/v1/lookup", params={"value": "not an indicator"})
    assert unknown.status_code == 200
    assert unknown.json()["found"] is False and unknown.json()["type"] == "ipv4"
    assert garbage.status_code == 400 and garbage.json()["error"]["code"] == "invalid_parameter"


async def test_the_risk_is_the_records_decayed_score_explained(server) -> None:
    # Reported 12 days ago by two feeds: the decay term is part of the explanation, and the lookup's risk is the
    # record's `score` in the list, its factors adding up to it.
    await server.ctx.iocs.upsert_iocs([_ioc("ipv4", "45.153.160.77", hours=12 * 24)])
    async with server.client(server.pro_key) as http:
        risk = (await http.get("/api/v1/lookup", params={"value": "45.153.160.77"})).json()["risk"]
        [row] = (await http.get("/api/v1/iocs", params={"status": "active,expired"})).json()["data"]
    assert risk["score"] == row["score"] and 0 < row["score"] < 100
    assert sum(f["points"] for f in risk["factors"]) == risk["score"]
    assert any("half-life 10 days" in f["factor"] and f["points"] < 0 for f in risk["factors"])
