"""TAXII as SIEM connectors call it: HTTP Basic with the key as the password, and any Accept that does not
exclude TAXII JSON; with taxii2-client, raw requests and the header sets of Sentinel and OpenCTI."""

from __future__ import annotations

import asyncio
import base64
import logging

import httpx
import pytest
from taxii2client.v21 import ApiRoot, Collection, Server

from taxii.media import TAXII_21
from tests.taxii.conftest import assert_taxii_error

ROOT = "/api/taxii2/api/"
OBJECTS = ROOT + "collections/all-iocs/objects/"


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


# What each connector sends, from its vendor's documentation or issue tracker:
# - Microsoft Sentinel, "Threat Intelligence - TAXII" data connector (learn.microsoft.com, "Connect
#   Microsoft Sentinel to STIX/TAXII threat intelligence feeds"): API root URL, collection ID, user name and
#   password, sent as HTTP Basic, with the TAXII 2.1 media type in Accept.
# - OpenCTI's TAXII feed client (OpenCTI-Platform/opencti issue #4246): axios' default
#   `Accept: application/json, text/plain, */*`, which medallion answered 406; Basic when the feed is
#   configured with a user name and password, else a Bearer token.
SENTINEL = {"Accept": TAXII_21, "User-Agent": "Microsoft Sentinel TAXII client"}
OPENCTI = {"Accept": "application/json, text/plain, */*", "User-Agent": "axios/1.6.2"}


async def test_taxii2_client_with_user_and_password(server, iocs) -> None:
    await server.ctx.iocs.upsert_iocs(iocs(12))

    def poll() -> tuple[list[str], list[str], int]:
        found = Server(server.url + "/taxii2/", user="sentinel", password=server.pro_key)
        root = ApiRoot(found.default.url, user="anyone", password=server.pro_key)
        collection = Collection(server.url + OBJECTS.removesuffix("objects/"), user="x", password=server.pro_key)
        return (
            [r.url for r in found.api_roots],
            [c.id for c in root.collections],
            len(collection.get_objects()["objects"]),
        )

    roots, collections, count = await asyncio.to_thread(poll)
    assert roots == [server.url + ROOT] and "all-iocs" in collections and count == 12


@pytest.mark.parametrize(
    ("headers", "scheme"),
    [(SENTINEL, "basic"), (OPENCTI, "basic"), (OPENCTI, "bearer")],
    ids=["sentinel", "opencti-basic", "opencti-bearer"],
)
async def test_connector_header_sets_are_answered_in_taxii_json(server, iocs, headers, scheme: str) -> None:
    await server.ctx.iocs.upsert_iocs(iocs(5))
    async with httpx.AsyncClient(base_url=server.url, headers=headers) as http:
        key = server.pro_key
        http.headers["Authorization"] = basic("soc-team", key) if scheme == "basic" else f"Bearer {key}"
        for path in ("/taxii2/", ROOT, ROOT + "collections/", OBJECTS):
            response = await http.get(path)
            assert response.status_code == 200, (path, response.text)
            assert response.headers["Content-Type"] == TAXII_21
        assert len(response.json()["objects"]) == 5


@pytest.mark.parametrize(
    "accept",
    [
        None,
        "*/*",
        "application/json",
        "application/*",
        "application/*;q=0.2",
        "text/html, */*;q=0.1",
        "application/taxii+json",
        "application/taxii+json;q=0, application/taxii+json;version=2.1",
    ],
)
async def test_accept_that_admits_taxii_json_is_answered(server, taxii_http, accept: str | None) -> None:
    async with taxii_http(server.pro_key, accept=accept) as http:
        response = await http.get(ROOT + "collections/")
    assert response.status_code == 200 and response.headers["Content-Type"] == TAXII_21


@pytest.mark.parametrize(
    "accept",
    [
        "application/xml",
        "*/*;q=0",
        "application/json;q=0",
        "application/taxii+json;q=0, */*",
        "application/taxii+json;version=2.0",
        "application/stix+json;version=2.1",
    ],
)
async def test_accept_that_excludes_taxii_json_is_406(server, taxii_http, accept: str) -> None:
    async with taxii_http(server.pro_key, accept=accept) as http:
        assert_taxii_error(await http.get(ROOT + "collections/"), 406, "not_acceptable")


async def test_401_challenges_name_bearer_and_basic(server, taxii_http) -> None:
    async with taxii_http() as http:
        missing = await http.get(ROOT)
        wrong = await http.get(ROOT, headers={"Authorization": basic("u", "sk_live_" + "x" * 43)})
    assert_taxii_error(missing, 401, "missing_api_key")
    assert missing.headers.get_list("WWW-Authenticate") == [
        'Bearer realm="ctiwire TAXII"',
        'Basic realm="ctiwire TAXII", charset="UTF-8"',
    ]
    assert_taxii_error(wrong, 401, "invalid_api_key")
    assert wrong.headers.get_list("WWW-Authenticate")[0] == 'Bearer realm="ctiwire TAXII", error="invalid_token"'


async def test_basic_follows_the_key_rules_scopes_and_rate_limits(server, taxii_http) -> None:
    async with taxii_http() as http:
        free = await http.get(ROOT, headers={"Authorization": basic("u", server.free_key)})
        as_user = await http.get(ROOT, headers={"Authorization": basic(server.pro_key, "")})
        no_key = await http.get(ROOT, headers={"Authorization": basic("someone", "")})
        bearer = await http.get(ROOT, headers={"Authorization": f"Bearer {server.pro_key}"})
        by_basic = await http.get(ROOT, headers={"Authorization": basic("u", server.pro_key)})
    assert_taxii_error(free, 403, "insufficient_scope")
    assert as_user.status_code == 200  # `curl -u KEY:`: a key-shaped user name and no password
    assert_taxii_error(no_key, 401, "missing_api_key")
    remaining = [int(r.headers["X-RateLimit-Remaining"]) for r in (bearer, by_basic)]
    assert remaining[1] == remaining[0] - 1  # one key, one counter, whichever way it was sent


async def test_malformed_basic_never_echoes_or_logs_the_secret(server, taxii_http, caplog) -> None:
    secret = "sk_live_" + "S3cr3t" * 7
    caplog.set_level(logging.DEBUG)
    bad = {
        "not base64": "Basic !!" + secret,
        "no colon": "Basic " + base64.b64encode(secret.encode()).decode(),
        "not UTF-8": "Basic " + base64.b64encode(b"u:\xff" + secret.encode()).decode(),
    }
    async with taxii_http() as http:
        for header in bad.values():
            response = assert_taxii_error(
                await http.get(ROOT, headers={"Authorization": header}), 401, "invalid_api_key"
            )
            assert "malformed Basic credentials" in str(response["description"])
            assert secret[8:] not in str(response) and header[6:] not in str(response)
    assert secret[8:] not in caplog.text and "S3cr3t" not in caplog.text


async def test_exports_take_basic_and_challenge_with_it(server, iocs) -> None:
    await server.ctx.iocs.upsert_iocs(iocs(5))
    async with httpx.AsyncClient(base_url=server.url, auth=("splunk", server.pro_key)) as http:
        stix = await http.get("/api/v1/iocs/stix")
        ndjson = await http.get("/api/v1/articles", params={"format": "ndjson"})
    assert stix.status_code == 200 and stix.json()["type"] == "bundle"
    assert ndjson.status_code == 200
    async with httpx.AsyncClient(base_url=server.url) as http:
        export = await http.get("/api/v1/iocs/misp")
        listing = await http.get("/api/v1/iocs", headers={"Authorization": basic("u", server.pro_key)})
    assert export.status_code == 401
    assert export.headers.get_list("WWW-Authenticate") == [
        'Bearer realm="ctiwire"',
        'Basic realm="ctiwire", charset="UTF-8"',
    ]
    # The IOC list is no export: Basic is not read there, and its challenge says so.
    assert listing.status_code == 401 and listing.json()["error"]["code"] == "missing_api_key"
    assert listing.headers.get_list("WWW-Authenticate") == ['Bearer realm="ctiwire"']
