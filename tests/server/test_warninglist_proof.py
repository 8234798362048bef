"""Known-benign values end to end on every backend: an article naming a public resolver, a Microsoft sign-in
host and a fresh C2 address gives one IOC in the list, the exports and TAXII, and two warninglisted ones
that only ``include_warninglisted=true`` brings back, flagged; lookups name the lists, stored or not."""

from __future__ import annotations

from typing import Any

import pytest
from conformance.factories import article
from stix_support import validate_stix

from exporters.registry import EXPORTERS
from ingest.aggregate import aggregate
from store.records import ArticleIoc, utcnow
from taxii.media import TAXII_21

C2 = "45.153.160.7"
RESOLVERS = "List of known IPv4 public DNS resolvers"
OFFICE = "List of known Office 365 URLs"


@pytest.fixture
async def reported(server: Any) -> Any:
    now = utcnow()
    mentions = [
        ArticleIoc("ipv4", "8.8.8.8", "high"),
        ArticleIoc("domain", "login.microsoftonline.com", "high"),
        ArticleIoc("ipv4", C2, "high"),
    ]
    story = article(1, published_at=now, fetched_at=now, modified_at=now, created_at=now, iocs=mentions)
    await server.ctx.stores.iocs.upsert_iocs(aggregate([story], {"Example News": "commercial"}))
    await server.ctx.stores.articles.upsert_articles([story])
    return server


async def _get(server: Any, path: str, **params: str) -> Any:
    async with server.client(server.pro_key) as http:
        response = await http.get(path, params=params)
    assert response.status_code == 200, response.text
    return response


async def test_lists_and_exports_leave_listed_values_out(reported: Any) -> None:
    rows = (await _get(reported, "/api/v1/iocs")).json()["data"]
    assert [(r["value"], r["warninglisted"]) for r in rows] == [(C2, False)]
    every = (await _get(reported, "/api/v1/iocs", include_warninglisted="true")).json()["data"]
    lists = {r["value"]: r["warninglists"] for r in every}
    assert RESOLVERS in lists["8.8.8.8"] and OFFICE in lists["login.microsoftonline.com"] and lists[C2] == []
    found = (await _get(reported, "/api/v1/iocs/search", q="8.8.8.8")).json()["data"]
    assert found == []
    assert (await _get(reported, "/api/v1/iocs/search", q="8.8.8.8", include_warninglisted="1")).json()["data"]


async def test_stix_and_misp_exports(reported: Any) -> None:
    bundle = validate_stix((await _get(reported, "/api/v1/iocs/stix")).content)
    patterns = [o["pattern"] for o in bundle["objects"] if o["type"] == "indicator"]
    assert patterns == [f"[ipv4-addr:value = '{C2}']"]
    every = validate_stix((await _get(reported, "/api/v1/iocs/stix", include_warninglisted="true")).content)
    flagged = {o["pattern"]: "warninglisted" in o["labels"] for o in every["objects"] if o["type"] == "indicator"}
    assert len(flagged) == 3 and sum(flagged.values()) == 2 and not flagged[f"[ipv4-addr:value = '{C2}']"]
    misp = (await _get(reported, "/api/v1/iocs/misp", include_warninglisted="true")).json()["Event"]["Attribute"]
    listed = {a["value"]: a for a in misp}["8.8.8.8"]
    assert listed["to_ids"] is False and f'ctiwire:warninglist="{RESOLVERS}"' in [t["name"] for t in listed["Tag"]]


async def test_taxii_leaves_listed_values_out(reported: Any) -> None:
    async with reported.client(reported.pro_key) as http:
        response = await http.get("/api/taxii2/api/collections/all-iocs/objects/", headers={"Accept": TAXII_21})
    assert response.status_code == 200, response.text
    objects = response.json()["objects"]
    assert [o["pattern"] for o in objects if o["type"] == "indicator"] == [f"[ipv4-addr:value = '{C2}']"]
    async with reported.client(reported.pro_key) as http:
        every = await http.get("/api/taxii2/api/collections/all-iocs/objects/", headers={"Accept": TAXII_21},
                               params={"include_warninglisted": "true"})
    labelled = [o for o in every.json()["objects"] if "warninglisted" in o.get("labels", [])]
    assert len(every.json()["objects"]) == 3 and len(labelled) == 2


async def test_stats_say_how_many_were_left_out(reported: Any) -> None:
    stats = (await _get(reported, "/api/v1/iocs/stats", window="7d")).json()
    assert stats["total"] == 1 and stats["warninglisted_excluded"] == 2


async def test_lookups_name_the_lists_stored_or_not(reported: Any) -> None:
    stored = (await _get(reported, "/api/v1/lookup", value="8.8.8.8")).json()
    assert stored["found"] is True and {"name": RESOLVERS} in stored["warninglists"]
    fresh = (await _get(reported, "/api/v1/lookup", value="9.9.9.9")).json()
    assert fresh["found"] is False and fresh["warninglisted"] is True
    assert fresh["note"].startswith("not in our data; on the warninglist ") and RESOLVERS in fresh["note"]
    clean = (await _get(reported, "/api/v1/lookup", value=C2)).json()
    assert clean["found"] is True and clean["warninglisted"] is False and clean["warninglists"] == []
    async with reported.client(reported.pro_key) as http:
        bulk = (await http.post("/api/v1/lookup", json={"values": ["1[.]1[.]1[.]1", C2]})).json()["data"]
    assert [(r["result"], r["warninglisted"]) for r in bulk] == [("not_found", True), ("found", False)]


@pytest.mark.parametrize("fmt", list(EXPORTERS))
async def test_every_export_format_leaves_listed_values_out_by_default(reported: Any, fmt: str) -> None:
    listed = {"8.8.8.8", "login.microsoftonline.com"}
    default = (await _get(reported, f"/api/v1/iocs/{fmt}")).text
    every = (await _get(reported, f"/api/v1/iocs/{fmt}", include_warninglisted="true")).text
    shown = {v for v in (*listed, C2) if v in default}
    assert not shown & listed and {v for v in listed if v in every}, fmt
    assert shown <= {v for v in (*listed, C2) if v in every}
