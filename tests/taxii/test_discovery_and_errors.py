"""Discovery, API root and collections through taxii2-client; every error as the TAXII error resource."""

from __future__ import annotations

import asyncio

from taxii2client.v21 import ApiRoot, Server

from taxii.collections import COLLECTIONS
from taxii.media import TAXII_21 as TAXII
from tests.taxii.conftest import assert_taxii_error

ROOT = "/api/taxii2/api/"


async def test_discovery_api_root_and_collections_with_the_oasis_client(server, bearer) -> None:
    def poll() -> tuple[Server, Server]:
        auth = bearer(server.pro_key)
        return Server(server.url + "/taxii2/", auth=auth), Server(server.url + "/api/taxii2/", auth=auth)

    taxii_path, spec_path = await asyncio.to_thread(poll)

    def read(found: Server) -> tuple[str, ApiRoot, list[str], list[str]]:
        root = found.default
        return found.title, root, root.versions, [c.id for c in root.collections]

    for found in (taxii_path, spec_path):
        title, root, versions, ids = await asyncio.to_thread(read, found)
        assert title == "ctiwire TAXII 2.1 server"
        assert root.url == server.url + ROOT and [r.url for r in found.api_roots] == [root.url]
        assert versions == [TAXII] and root.max_content_length == 0
        assert ids == ["all-iocs", "ip-addresses", "file-hashes", "domains", "urls", "cves", "attack-patterns",
                       "ctiwire-context"]


async def test_collection_resources(server, taxii_http, bearer) -> None:
    def read() -> list[dict[str, object]]:
        root = ApiRoot(server.url + ROOT, auth=bearer(server.pro_key))
        return [c._raw for c in root.collections]  # the resource exactly as served

    listed = await asyncio.to_thread(read)
    assert listed == [c.resource() for c in COLLECTIONS]
    for resource in listed:
        assert resource["can_read"] is True and resource["can_write"] is False
        assert resource["media_types"] == ["application/stix+json;version=2.1"]
    async with taxii_http(server.pro_key) as http:
        one = await http.get(ROOT + "collections/attack-patterns/")
        again = await http.get(ROOT + "collections/")
    assert one.json() == listed[-2] and one.headers["Content-Type"] == TAXII
    assert again.json()["collections"] == listed  # always the same order


async def test_free_key_is_403(server, taxii_http) -> None:
    async with taxii_http(server.free_key) as http:
        for path in ("/taxii2/", ROOT, ROOT + "collections/all-iocs/objects/"):
            body = assert_taxii_error(await http.get(path), 403, "insufficient_scope")
            assert body["details"]["required_scope"] == "read:taxii"  # type: ignore[index]


async def test_unknown_things_are_taxii_404s(server, taxii_http) -> None:
    paths = [ROOT + "collections/no-such/", ROOT + "collections/no-such/objects/",
             ROOT + "collections/no-such/manifest/",
             ROOT + "collections/all-iocs/objects/indicator--00000000-0000-5000-8000-000000000000/",
             ROOT + "collections/all-iocs/objects/indicator--00000000-0000-5000-8000-000000000000/versions/",
             ROOT + "collections/all-iocs/objects/not-an-id/",
             ROOT + "status/5b8f3b4c-8d2a-4f5e-9d0a-2c1b3a4d5e6f/", "/api/taxii2/other/", "/taxii2/api/"]
    async with taxii_http(server.pro_key) as http:
        for path in paths:
            assert_taxii_error(await http.get(path), 404, "not_found")
    async with taxii_http() as http:  # unknown paths need no key to be unknown
        assert_taxii_error(await http.get("/api/taxii2/other/"), 404, "not_found")


async def test_writes_are_refused_as_taxii_405(server, taxii_http) -> None:
    async with taxii_http(server.pro_key, **{"Content-Type": TAXII}) as http:
        response = await http.post(ROOT + "collections/all-iocs/objects/", content=b'{"objects": []}')
    assert_taxii_error(response, 405, "method_not_allowed")
    assert response.headers["Allow"] == "GET"  # HEAD is not served, so it is not offered
