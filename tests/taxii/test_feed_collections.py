"""Saved feeds as TAXII 2.1 collections, read with taxii2-client: listed after the fixed collections for
their owner only, holding exactly the records the feed's filters select, and following an edit."""

from __future__ import annotations

import asyncio
from typing import Any

from support import delivered_key
from taxii2client.v21 import ApiRoot, Collection, as_pages

from store import accounts
from taxii.collections import COLLECTIONS

ROOT = "/api/taxii2/api/"
FILTERS = {"type": ["ipv4", "domain", "cve"], "confidence": ["high"], "industry": ["finance"]}


async def _feed(server: Any, key: str, filters: dict[str, Any]) -> dict[str, Any]:
    async with server.client(key) as http:
        made = await http.post("/api/v1/feeds", json={"name": "finance high", "filters": filters})
    assert made.status_code == 201, made.text
    return dict(made.json())


async def _rest_ids(server: Any, key: str, feed_id: str) -> set[str]:
    async with server.client(key) as http:
        page = await http.get(f"/api/v1/feeds/{feed_id}/iocs", params={"limit": 10_000})
    return {row["stix_id"] for row in page.json()["data"]}


def _walk(url: str, auth: Any) -> list[dict[str, Any]]:
    collection = Collection(url, auth=auth)
    return [o for envelope in as_pages(collection.get_objects, per_request=7) for o in envelope.get("objects", [])]


async def test_a_feed_is_its_owners_collection(server, iocs, bearer, stix_valid) -> None:
    await server.ctx.iocs.upsert_iocs(iocs(120))
    feed = await _feed(server, server.pro_key, FILTERS)
    root = await asyncio.to_thread(lambda: ApiRoot(server.url + ROOT, auth=bearer(server.pro_key)))
    listed = await asyncio.to_thread(lambda: [(c.id, c.title, c.can_read, c.can_write) for c in root.collections])
    assert listed == [*((c.id, c.title, True, False) for c in COLLECTIONS), (feed["id"], "finance high", True, False)]
    objects = await asyncio.to_thread(_walk, feed["links"]["taxii"], bearer(server.pro_key))
    expected = await _rest_ids(server, server.pro_key, feed["id"])
    ids = [o["id"] for o in objects]
    assert expected and len(ids) == len(set(ids)) and set(ids) == expected  # each selected object, once
    assert {o["type"] for o in objects} == {"indicator", "vulnerability"}
    assert all(
        "ipv4-addr" in o["pattern"] or "domain-name" in o["pattern"] for o in objects if o["type"] == "indicator"
    )
    stix_valid(objects)


async def test_an_edited_feed_serves_its_new_filters(server, iocs, bearer) -> None:
    await server.ctx.iocs.upsert_iocs(iocs(60))
    feed = await _feed(server, server.pro_key, {"type": ["ipv4"]})
    before = await asyncio.to_thread(_walk, feed["links"]["taxii"], bearer(server.pro_key))
    async with server.client(server.pro_key) as http:
        await http.patch(f"/api/v1/feeds/{feed['id']}", json={"filters": {"type": ["domain"]}})
    after = await asyncio.to_thread(_walk, feed["links"]["taxii"], bearer(server.pro_key))
    assert before and after and {o["id"] for o in after} == await _rest_ids(server, server.pro_key, feed["id"])
    assert all("ipv4-addr" in o["pattern"] for o in before) and all("domain-name" in o["pattern"] for o in after)


async def test_no_other_account_sees_the_collection(server, iocs, bearer, taxii_http) -> None:
    await server.ctx.iocs.upsert_iocs(iocs(30))
    feed = await _feed(server, server.pro_key, {"type": ["ipv4"]})
    await accounts.create_user(server.ctx.accounts, "other@test.local", "pro")
    other = (await delivered_key(server.ctx.accounts, "other@test.local", "main")).secret
    root = await asyncio.to_thread(lambda: ApiRoot(server.url + ROOT, auth=bearer(other)))
    ids = await asyncio.to_thread(lambda: [c.id for c in root.collections])
    assert feed["id"] not in ids and ids == [c.id for c in COLLECTIONS]
    async with taxii_http(other) as http:
        for path in ("", "objects/", "manifest/"):
            answer = await http.get(feed["links"]["taxii"] + path)
            assert answer.status_code == 404 and answer.json()["http_status"] == "404", path


async def test_a_free_feed_has_no_collection(server, taxii_http) -> None:
    feed = await _feed(server, server.free_key, {"type": ["ipv4"]})
    async with taxii_http(server.free_key) as http:
        refused = await http.get(f"{ROOT}collections/{feed['id']}/objects/")
    assert refused.status_code == 403 and refused.json()["error_code"] == "insufficient_scope"
