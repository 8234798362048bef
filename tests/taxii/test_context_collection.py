"""The context collection: the objects the IOC collections' objects refer to, read through TAXII."""

from __future__ import annotations

import asyncio
from typing import Any

from taxii2client.v21 import Collection, as_pages

from exporters.stix_objects import IDENTITY_ID, TLP_CLEAR, TLP_CLEAR_ID, identity_object
from taxii.collections import CONTEXT
from taxii.media import STIX_21
from tests.stix_support import dangling_refs

OBJECTS = f"/api/taxii2/api/collections/{CONTEXT}/"


def _client(server: Any, bearer: Any, cid: str) -> Collection:
    return Collection(f"{server.url}/api/taxii2/api/collections/{cid}/", auth=bearer(server.pro_key))


async def test_taxii2_client_reads_the_marking_and_identity_page_by_page(server, bearer, stix_valid) -> None:
    collection = _client(server, bearer, CONTEXT)
    pages = await asyncio.to_thread(lambda: list(as_pages(collection.get_objects, per_request=1)))
    assert [page["objects"] for page in pages] == [[dict(TLP_CLEAR)], [identity_object()]]  # by created
    assert [page["more"] for page in pages] == [True, False]
    for page in pages:
        stix_valid(page["objects"])
    assert not collection.can_write and collection.can_read


async def test_every_ref_of_the_ioc_collections_resolves_in_the_union(server, iocs, bearer, stix_valid) -> None:
    await server.ctx.iocs.upsert_iocs(iocs(30))

    def read(cid: str) -> list[dict[str, Any]]:
        return [
            o
            for page in as_pages(_client(server, bearer, cid).get_objects, per_request=7)
            for o in page.get("objects", [])
        ]

    def read_basic() -> list[dict[str, Any]]:  # as SIEM connectors call it: the key as a Basic password
        url = f"{server.url}/api/taxii2/api/collections/{CONTEXT}/"
        return Collection(url, user="siem", password=server.pro_key).get_objects()["objects"]

    records, context = await asyncio.gather(asyncio.to_thread(read, "all-iocs"), asyncio.to_thread(read_basic))
    assert context == await asyncio.to_thread(read, CONTEXT)
    assert len(records) == 30 and {o["type"] for o in records} >= {"indicator", "vulnerability"}
    assert dangling_refs(records + context) == set()
    assert dangling_refs(records) == {IDENTITY_ID, TLP_CLEAR_ID}  # what the context collection adds
    stix_valid(records + context)


async def test_filters_manifest_object_and_versions(server, taxii_http) -> None:
    marking_created, identity_created = TLP_CLEAR["created"], identity_object()["created"]
    async with taxii_http(server.pro_key) as http:
        typed = await http.get(OBJECTS + "objects/", params={"match[type]": "identity"})
        by_id = await http.get(OBJECTS + "objects/", params={"match[id]": TLP_CLEAR_ID})
        after = await http.get(OBJECTS + "objects/", params={"added_after": marking_created})
        old = await http.get(OBJECTS + "objects/", params={"added_after": "2000-01-01T00:00:00Z"})
        manifest = await http.get(OBJECTS + "manifest/")
        one = await http.get(f"{OBJECTS}objects/{TLP_CLEAR_ID}/", params={"match[version]": marking_created})
        versions = await http.get(f"{OBJECTS}objects/{TLP_CLEAR_ID}/versions/")
        other = await http.get(f"{OBJECTS}objects/indicator--{'0' * 8}-0000-5000-8000-{'0' * 12}/")
        no_spec = await http.get(OBJECTS + "objects/", params={"match[spec_version]": "2.0"})
    assert [o["id"] for o in typed.json()["objects"]] == [IDENTITY_ID]
    assert by_id.json()["objects"] == [TLP_CLEAR]
    assert after.json()["objects"] == [identity_object()]
    assert after.headers["X-TAXII-Date-Added-First"].startswith(identity_created[:19])
    # The tier lookback limits IOC history, not these fixed objects: no clamping header.
    assert len(old.json()["objects"]) == 2 and "X-Tier-Lookback-Clamped" not in old.headers
    assert old.headers["X-Tier-Lookback-Days"]
    assert [(m["id"], m["version"], m["media_type"]) for m in manifest.json()["objects"]] == [
        (TLP_CLEAR_ID, marking_created, STIX_21),
        (IDENTITY_ID, identity_created, STIX_21),
    ]
    assert one.json()["objects"] == [TLP_CLEAR] and versions.json() == {"more": False, "versions": [marking_created]}
    assert other.status_code == 404 and no_spec.json() == {"more": False}
