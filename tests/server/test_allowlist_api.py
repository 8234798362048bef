"""``/api/v1/allowlist`` through real HTTP on every backend: entries added, listed and deleted per account,
clear 400s for entries that are none, and the account's exports and TAXII pages leaving them out while
another account's keep them."""

from __future__ import annotations

from typing import Any

import pytest
from conformance.factories import article
from stix_support import validate_stix
from support import delivered_key

from exporters.registry import EXPORTERS
from ingest.aggregate import aggregate
from store import accounts
from store.records import ArticleIoc, utcnow
from taxii.media import TAXII_21

URL = "/api/v1/allowlist"
VALUES = ["45.153.160.7", "45.153.161.9", "cdn.corp-example.net", "evil-c2.badhost-zone.top"]


@pytest.fixture
async def reported(server: Any) -> Any:
    now = utcnow()
    mentions = [ArticleIoc("ipv4", v, "high") if v[0].isdigit() else ArticleIoc("domain", v, "high") for v in VALUES]
    story = article(1, published_at=now, fetched_at=now, modified_at=now, created_at=now, iocs=mentions)
    await server.ctx.stores.iocs.upsert_iocs(aggregate([story], {"Example News": "commercial"}))
    await server.ctx.stores.articles.upsert_articles([story])
    await accounts.create_user(server.ctx.accounts, "other@test.local", "pro")
    server.other_key = (await delivered_key(server.ctx.accounts, "other@test.local", "main")).secret
    return server


async def _allow(server: Any, body: Any, key: str | None = None) -> Any:
    async with server.client(key or server.pro_key) as http:
        return await http.post(URL, json=body)


async def test_entries_are_added_listed_and_deleted(server: Any) -> None:
    added = await _allow(server, {"entries": ["45.153.160.0/24", {"value": "corp-example[.]net", "note": "ours"}]})
    assert added.status_code == 201, added.text
    assert [(e["kind"], e["value"], e["note"]) for e in added.json()["data"]] == [
        ("cidr", "45.153.160.0/24", ""),
        ("domain", "corp-example.net", "ours"),
    ]
    async with server.client(server.pro_key) as http:
        listed = (await http.get(URL)).json()
        assert listed["meta"] == {"total": 2, "limit": 10_000}
        entry_id = listed["data"][0]["id"]
        assert (await http.get(f"{URL}/{entry_id}")).json() == listed["data"][0]
    async with server.client(server.free_key) as http:
        assert (await http.delete(f"{URL}/{entry_id}")).status_code == 404  # another account's entry
        assert (await http.get(URL)).json()["data"] == []
    async with server.client(server.pro_key) as http:
        assert (await http.delete(f"{URL}/{entry_id}")).status_code == 204
        assert [e["value"] for e in (await http.get(URL)).json()["data"]] == ["corp-example.net"]


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"entries": []}, "entries"),
        ([], "entries"),
        ({"entries": ["8.8.8.8", "not an entry"]}, "entries[1]"),
        ({"entries": ["10.0.0.0/33"]}, "entries[0]"),
        ({"entries": [{"value": 7}]}, "entries[0]"),
        ({"entries": [{"value": "a.example", "note": "x" * 201}]}, "entries[0].note"),
    ],
)
async def test_entries_that_are_none_are_refused_by_name(server: Any, body: Any, parameter: str) -> None:
    response = await _allow(server, body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"]["parameter"] == parameter


async def test_the_plan_quota(server: Any) -> None:
    response = await _allow(server, {"entries": [f"host{n}.example" for n in range(101)]}, server.free_key)
    assert response.status_code == 403 and response.json()["error"]["code"] == "quota_exceeded"


async def _exported(server: Any, key: str) -> list[str]:
    async with server.client(key) as http:
        response = await http.get("/api/v1/iocs/stix", params={"limit": 2})
    assert response.status_code == 200, response.text
    return [o["name"].split(": ", 1)[1] for o in validate_stix(response.content)["objects"] if o["type"] == "indicator"]


async def _taxii(server: Any, key: str) -> list[str]:
    async with server.client(key) as http:
        response = await http.get("/api/taxii2/api/collections/all-iocs/objects/", headers={"Accept": TAXII_21})
    assert response.status_code == 200, response.text
    return sorted(o["name"].split(": ", 1)[1] for o in response.json().get("objects", []) if o["type"] == "indicator")


async def test_allowlisted_values_leave_that_accounts_exports_only(reported: Any) -> None:
    before = await _exported(reported, reported.pro_key)
    assert len(before) == 2 and await _taxii(reported, reported.pro_key) == sorted(VALUES)
    assert (await _allow(reported, {"entries": ["45.153.160.0/23", "corp-example.net"]})).status_code == 201
    # Left out after the store query, the page still filled up to its limit from the records after them.
    assert await _exported(reported, reported.pro_key) == ["evil-c2.badhost-zone.top"]
    assert await _taxii(reported, reported.pro_key) == ["evil-c2.badhost-zone.top"]
    assert len(await _exported(reported, reported.other_key)) == 2
    assert await _taxii(reported, reported.other_key) == sorted(VALUES)
    async with reported.client(reported.pro_key) as http:  # lists and search still show them
        rows = (await http.get("/api/v1/iocs")).json()["data"]
    assert len(rows) == 4


@pytest.mark.parametrize("fmt", list(EXPORTERS))
async def test_every_export_format_leaves_them_out(reported: Any, fmt: str) -> None:
    allowed = {"45.153.160.7", "45.153.161.9", "cdn.corp-example.net"}
    assert (await _allow(reported, {"entries": ["45.153.160.0/23", "corp-example.net"]})).status_code == 201
    found = {}
    for key in (reported.pro_key, reported.other_key):
        async with reported.client(key) as http:
            response = await http.get(f"/api/v1/iocs/{fmt}", params={"limit": 10})
        assert response.status_code == 200, response.text
        found[key] = {v for v in VALUES if v in response.text}
    mine, theirs = found[reported.pro_key], found[reported.other_key]
    assert theirs & allowed and mine == theirs - allowed, fmt
