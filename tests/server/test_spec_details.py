"""The spec's smaller promises, measured through real HTTP: out-of-range limits are clamped, the tier headers
ride on a 400 too, article ids are UUIDs in any case, a typed IOC search checks its value, and the TAXII
match filters state their patterns."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from store.records import Article, Ioc, utcnow

TAXII = {"Accept": "application/taxii+json;version=2.1"}
OBJECTS = "/api/taxii2/api/collections/all-iocs/objects/"
ARTICLE_ID = "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b"


async def _seed(server: Any) -> None:
    now = utcnow()
    iocs = [
        Ioc(
            "domain",
            f"c2-{n}.evil.example",
            "high",
            "Feed",
            "community",
            now - timedelta(hours=n),
            now - timedelta(hours=n),
            now - timedelta(hours=n),
        )
        for n in range(3)
    ]
    sha = "a" * 64
    iocs.append(Ioc("sha256", sha, "high", "Feed", "community", now, now, now))
    await server.ctx.iocs.upsert_iocs(iocs)
    await server.ctx.articles.upsert_articles(
        [
            Article(
                id=ARTICLE_ID,
                title="A report",
                url="https://news.example/a",
                canonical_url="https://news.example/a",
                summary="A report.",
                published_at=now,
                fetched_at=now,
                modified_at=now,
                created_at=now,
                source_name="S",
            )
        ]
    )


def _rows(path: str, response: Any) -> int:
    if path.startswith("/api/taxii2"):
        return len(response.json()["objects"])
    if path.endswith("/stix"):
        return sum(o["type"] == "indicator" for o in response.json()["objects"])  # one per IOC here
    return len(response.json()["data"])


@pytest.mark.parametrize(
    "path", ["/api/v1/articles", "/api/v1/iocs", "/api/v1/iocs/search?q=evil.example&", "/api/v1/iocs/stix", OBJECTS]
)
@pytest.mark.parametrize("limit", ["0", "-5"])
async def test_a_limit_below_one_is_read_as_one(server, path: str, limit: str) -> None:
    await _seed(server)
    base, _, query = path.partition("?")
    async with server.client(server.pro_key) as http:
        response = await http.get(f"{base}?{query}limit={limit}", headers=TAXII)
    assert response.status_code == 200, response.text
    assert _rows(base, response) == 1
    assert "X-Limit-Capped" not in response.headers  # only a limit above the tier cap is flagged


async def test_the_openapi_limits_have_no_minimum_and_say_so(server) -> None:
    async with server.client() as http:
        document = (await http.get("/api/openapi.json")).json()
    limits = [
        p for item in document["paths"].values() for op in item.values() for p in op.get("parameters", [])
        if p["name"] == "limit"
    ]
    assert len(limits) >= 12
    for limit in limits:
        assert "minimum" not in limit["schema"] and "below 1 are read as 1" in limit["description"]


@pytest.mark.parametrize(
    ("path", "params", "lookback", "cost"),
    [
        ("/api/v1/articles", {"since": "yesterday"}, "365", "1"),
        ("/api/v1/articles", {"format": "csv", "sort": "title:asc"}, "365", "5"),
        ("/api/v1/articles", {"format": "xml"}, "365", "1"),
        ("/api/v1/iocs/stix", {"confidence": "certain"}, "365", "5"),
        ("/api/v1/iocs/misp", {"window": "7d", "since": "2026-01-01T00:00:00Z"}, "365", "5"),
        ("/api/v1/iocs", {"type": "nope"}, "365", None),
        ("/api/v1/iocs/search", {"q": "zz", "type": "sha256"}, "365", None),
    ],
)
async def test_tier_headers_ride_on_a_400(
    server, path: str, params: dict[str, str], lookback: str, cost: str | None
) -> None:
    async with server.client(server.pro_key) as http:
        response = await http.get(path, params=params)
    assert response.status_code == 400, response.text
    assert response.headers["X-Tier-Lookback-Days"] == lookback
    assert response.headers.get("X-Format-Cost-Multiplier") == cost
    assert "X-RateLimit-Remaining" in response.headers


async def test_free_tier_headers_on_a_400(server) -> None:
    async with server.client(server.free_key) as http:
        articles = await http.get("/api/v1/articles", params={"limit": "many"})
        iocs = await http.get("/api/v1/iocs", params={"limit": "many"})
    assert articles.headers["X-Tier-Lookback-Days"] == "7" and articles.headers["X-Format-Cost-Multiplier"] == "1"
    assert iocs.headers["X-Tier-Lookback-Days"] == "1"


@pytest.mark.parametrize(
    "spelling", [ARTICLE_ID.upper(), ARTICLE_ID, "{" + ARTICLE_ID.upper() + "}", ARTICLE_ID.replace("-", "")]
)
async def test_an_article_id_is_a_uuid_in_any_case(server, spelling: str) -> None:
    await _seed(server)
    async with server.client(server.pro_key) as http:
        response = await http.get(f"/api/v1/articles/{spelling}")
    assert response.status_code == 200, response.text
    assert response.json()["id"] == ARTICLE_ID


async def test_taxii_object_ids_stay_case_sensitive(server) -> None:
    """STIX 2.1 section 2.9: identifiers are lower-case; an upper-case one is no identifier (404)."""
    await _seed(server)
    async with server.client(server.pro_key) as http:
        first = (await http.get(OBJECTS, headers=TAXII)).json()["objects"][0]["id"]
        lower = await http.get(f"{OBJECTS}{first}/", headers=TAXII)
        upper = await http.get(f"{OBJECTS}{first.upper()}/", headers=TAXII)
    assert lower.status_code == 200 and upper.status_code == 404


@pytest.mark.parametrize(
    ("q", "ioc_type"),
    [
        ("zz", "sha256"),
        ("a" * 63, "sha256"),
        ("not-a-cve", "cve"),
        ("CVE-24-1", "cve"),
        ("zz", "md5"),
        ("nobody", "email"),
        ("T12", "mitre-attack"),
        ("1.2.3", "ipv4"),
        ("evil example", "domain"),
        ("http://x.example/a", "domain"),
        ("a b", "url"),
    ],
)
async def test_a_typed_search_refuses_a_value_not_of_its_type(server, q: str, ioc_type: str) -> None:
    async with server.client(server.pro_key) as http:
        response = await http.get("/api/v1/iocs/search", params={"q": q, "type": ioc_type})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"] == {"parameter": "q"}


@pytest.mark.parametrize(
    ("q", "ioc_type", "found"),
    [
        ("A" * 64, "sha256", 1),
        ("evil", "domain", 3),
        ("c2-1.evil.example", "domain", 1),
        ("c2-1", "domain", 1),
        ("evil.example", None, 3),
        ("CVE-2024-0001", "cve", 0),
        ("example/gate", "url", 0),
    ],
)
async def test_a_typed_search_takes_a_value_or_part_of_one(server, q: str, ioc_type: str | None, found: int) -> None:
    await _seed(server)
    async with server.client(server.pro_key) as http:
        response = await http.get("/api/v1/iocs/search", params={"q": q, **({"type": ioc_type} if ioc_type else {})})
    assert response.status_code == 200, response.text
    assert len(response.json()["data"]) == found


async def test_the_taxii_match_filters_declare_the_patterns_they_check(server) -> None:
    async with server.client(server.pro_key) as http:
        document = (await http.get("/api/openapi.json")).json()
        operation = document["paths"][OBJECTS.replace("all-iocs", "{id}")]["get"]
        patterns = {
            p["name"]: re.compile(p["schema"]["pattern"])
            for p in operation["parameters"]
            if p["name"].startswith("match[")
        }
        cases = {
            "match[id]": (
                "indicator--6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b, vulnerability--6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b",
                "indicator--6F1C2B3A-4D5E-4F60-8A7B-9C0D1E2F3A4B",
            ),
            "match[type]": ("indicator,attack-pattern", "Indicator"),
            "match[version]": ("LAST, 2026-01-01T00:00:00.5Z", "latest"),
            "match[spec_version]": ("2.1", "two"),
        }
        for name, (good, bad) in cases.items():
            assert patterns[name].match(good) and not patterns[name].match(bad), name
            accepted = await http.get(OBJECTS, params={name: good}, headers=TAXII)
            refused = await http.get(OBJECTS, params={name: bad}, headers=TAXII)
            assert accepted.status_code == 200, (name, accepted.text)
            assert refused.status_code == 400 and refused.json()["details"]["parameter"] == name
