"""Discovery, API root and collections through taxii2-client; every error as the TAXII error resource."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from taxii2client.v21 import ApiRoot, Server

from taxii.collections import COLLECTIONS
from taxii.media import TAXII_21 as TAXII

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
        assert ids == ["all-iocs", "ip-addresses", "file-hashes", "domains", "urls", "cves", "attack-patterns"]


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
    assert one.json() == listed[-1] and one.headers["Content-Type"] == TAXII
    assert again.json()["collections"] == listed  # always the same order


def assert_taxii_error(response: httpx.Response, status: int, code: str) -> dict[str, object]:
    """TAXII 2.1 section 3.6.1, plus this server's promises: request id in details, TAXII media type."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == TAXII
    body = response.json()
    assert set(body) == {"title", "description", "error_id", "error_code", "http_status", "details"}
    assert body["http_status"] == str(status) and body["error_code"] == code
    assert body["details"]["request_id"] == response.headers["X-Request-Id"] == body["error_id"]
    assert body["title"] and body["description"]
    return body


async def test_no_key_is_401_with_www_authenticate(server, taxii_http) -> None:
    async with taxii_http() as http:
        missing = await http.get("/api/taxii2/")
        wrong = await http.get(ROOT + "collections/", headers={"Authorization": "Bearer sk_live_" + "x" * 43})
    assert_taxii_error(missing, 401, "missing_api_key")
    assert missing.headers["WWW-Authenticate"] == 'Bearer realm="ctiwire TAXII"'
    assert_taxii_error(wrong, 401, "invalid_api_key")
    assert wrong.headers["WWW-Authenticate"] == 'Bearer realm="ctiwire TAXII", error="invalid_token"'


async def test_free_key_is_403(server, taxii_http) -> None:
    async with taxii_http(server.free_key) as http:
        for path in ("/taxii2/", ROOT, ROOT + "collections/all-iocs/objects/"):
            body = assert_taxii_error(await http.get(path), 403, "insufficient_scope")
            assert body["details"]["required_scope"] == "read:taxii"  # type: ignore[index]


@pytest.mark.parametrize("accept", [None, "application/json", "*/*", "application/taxii+json;version=2.0",
                                    "application/stix+json;version=2.1"])
async def test_accept_without_taxii21_is_406(server, taxii_http, accept: str | None) -> None:
    async with taxii_http(server.pro_key, accept=accept) as http:
        response = await http.get(ROOT + "collections/")
    if accept is None:
        assert "Accept" not in response.request.headers
    assert_taxii_error(response, 406, "not_acceptable")


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
