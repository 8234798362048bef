"""Saved feeds through real HTTP on every backend: the CRUD routes, filter validation with the IOC list's
rules, owner isolation, the per-plan quota, a feed's IOC list, and its exports from the export cache."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from support import RunningServer, delivered_key

from config.tiers import IOC_EXPORT_COST, SCOPE_FEEDS, SCOPE_IOCS, TIERS
from exporters import precompute
from exporters.registry import EXPORTERS
from store.records import Ioc, utcnow

FEEDS = "/api/v1/feeds"


def records() -> list[Ioc]:
    """Twelve records over types, confidences, sectors, feeds and actors, all inside the Free lookback."""
    base = utcnow() - timedelta(hours=6)
    rows = []
    for n in range(12):
        kind = ("ipv4", "domain", "sha256")[n % 3]
        value = {"ipv4": f"198.51.100.{n}", "domain": f"c2-{n}.bad.example", "sha256": f"{n:064x}"}[kind]
        seen = base + timedelta(minutes=n)
        rows.append(
            Ioc(
                kind,
                value,
                ("high", "medium", "low")[n % 3 if n < 9 else 0],
                f"Feed {n % 4}",
                "commercial",
                seen,
                seen,
                seen,
                sources=[f"Feed {n % 4}"],
                industries=["finance"] if n % 2 else ["energy"],
                threat_actors=["lazarus"] if n < 4 else [],
                severity=n * 0.85,  # 9, 10 high, 11 critical
            )
        )
    return rows


async def _post(server: RunningServer, key: str, body: Any) -> Any:
    async with server.client(key) as http:
        return await http.post(FEEDS, json=body)


@pytest.fixture
async def seeded(server: RunningServer) -> RunningServer:
    await server.ctx.iocs.upsert_iocs(records())
    return server


async def test_create_read_update_delete(server: RunningServer) -> None:
    made = await _post(
        server,
        server.pro_key,
        {
            "name": "finance hi",
            "filters": {"type": ["ipv4", "domain"], "confidence": "high", "industry": "financial-services"},
        },
    )
    assert made.status_code == 201, made.text
    feed = made.json()
    assert feed["filters"] == {"type": ["ipv4", "domain"], "confidence": ["high"], "industry": ["finance"]}
    assert made.headers["Location"] == f"{FEEDS}/{feed['id']}"
    links = feed["links"]
    assert links["iocs"] == f"{server.url}{FEEDS}/{feed['id']}/iocs"
    assert links["taxii"] == f"{server.url}/api/taxii2/api/collections/{feed['id']}/"
    assert set(links["exports"]) == set(EXPORTERS)  # every registered format, new ones included
    async with server.client(server.pro_key) as http:
        listed = (await http.get(FEEDS)).json()
        assert [f["id"] for f in listed["data"]] == [feed["id"]] and listed["meta"]["limit"] == TIERS["pro"].max_feeds
        patched = await http.patch(f"{FEEDS}/{feed['id'].upper()}", json={"filters": {"threat_actor": "Lazarus"}})
        assert patched.status_code == 200, patched.text
        assert patched.json()["filters"] == {"threat_actor": ["lazarus"]} and patched.json()["name"] == "finance hi"
        assert (await http.get(f"{FEEDS}/{feed['id']}")).json()["filters"] == {"threat_actor": ["lazarus"]}
        assert (await http.delete(f"{FEEDS}/{feed['id']}")).status_code == 204
        gone = await http.get(f"{FEEDS}/{feed['id']}")
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "not_found"
        refused = await http.put(FEEDS, json={})
        assert refused.status_code == 405 and refused.headers["Allow"] == "GET, POST"


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"name": "x", "filters": {"type": ["ipv4", "hash"]}}, "filters.type"),
        ({"name": "x", "filters": {"confidence": "certain"}}, "filters.confidence"),
        ({"name": "x", "filters": {"industry": ["finance", "farming"]}}, "filters.industry"),
        ({"name": "x", "filters": {"category": ["press"]}}, "filters.category"),
        ({"name": "x", "filters": {"severity": ["high", "severe"]}}, "filters.severity"),
        ({"name": "x", "filters": {"source": [1, 2]}}, "filters.source"),
        ({"name": "x", "filters": {"source": ["a"] * 101}}, "filters.source"),
        ({"name": "x", "filters": ["ipv4"]}, "filters"),
        ({"name": "", "filters": {}}, "name"),
        ({"name": "n" * 101}, "name"),
        ({"filters": {}}, "name"),
    ],
)
async def test_bad_filters_are_400_naming_them(server: RunningServer, body: dict[str, Any], parameter: str) -> None:
    response = await _post(server, server.pro_key, body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_parameter" and error["details"]["parameter"] == parameter, error
    assert error["request_id"].startswith("req_")


async def test_a_body_that_is_not_an_object_is_400(server: RunningServer) -> None:
    async with server.client(server.pro_key) as http:
        for content in (b"{not json", b"[1]", b"x" * (64 * 1024 + 1)):
            response = await http.post(FEEDS, content=content)
            assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_body"


async def test_another_accounts_feed_is_404_everywhere(server: RunningServer) -> None:
    theirs = (await _post(server, server.free_key, {"name": "mine", "filters": {"type": "ipv4"}})).json()
    url = f"{FEEDS}/{theirs['id']}"
    async with server.client(server.pro_key) as http:
        answers = [
            await http.get(url),
            await http.patch(url, json={"name": "stolen"}),
            await http.delete(url),
            await http.get(url + "/iocs"),
            await http.get(url + "/export/stix"),
            await http.get(f"{FEEDS}/not-a-uuid"),
        ]
        assert [a.status_code for a in answers] == [404] * 6
        assert (await http.get(FEEDS)).json()["data"] == []
    async with server.client(server.free_key) as http:
        assert (await http.get(url)).json()["name"] == "mine"  # untouched


async def test_the_plan_caps_the_feeds_and_names_are_unique(server: RunningServer) -> None:
    assert (await _post(server, server.free_key, {"name": "one"})).status_code == 201
    over = await _post(server, server.free_key, {"name": "two"})
    assert over.status_code == 403
    assert over.json()["error"]["code"] == "quota_exceeded" and over.json()["error"]["details"]["limit"] == 1
    assert (await _post(server, server.pro_key, {"name": "same"})).status_code == 201
    taken = await _post(server, server.pro_key, {"name": "same"})
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "name_taken"


async def test_the_scope_feeds_manages_them(server: RunningServer) -> None:
    without = (await delivered_key(server.ctx.accounts, "pro@test.local", "no-feeds", [SCOPE_IOCS])).secret
    response = await _post(server, without, {"name": "x"})
    assert response.status_code == 403 and response.json()["error"]["details"]["required_scope"] == SCOPE_FEEDS


async def test_a_feeds_iocs_are_the_iocs_list_with_its_filters(seeded: RunningServer) -> None:
    filters = {"type": ["ipv4", "domain"], "industry": ["finance"], "threat_actor": ["lazarus"]}
    for key in (seeded.free_key, seeded.pro_key):
        feed = (await _post(seeded, key, {"name": "f", "filters": filters})).json()
        async with seeded.client(key) as http:
            mine = await http.get(f"{FEEDS}/{feed['id']}/iocs", params={"limit": 1, "type": "sha256"})
            listed = await http.get(
                "/api/v1/iocs",
                params={"type": "ipv4,domain", "industry": "finance", "threat_actor": "lazarus", "limit": 1},
            )
        assert mine.status_code == 200, mine.text
        assert mine.json() == listed.json()  # the query's own filter parameters give way to the feed's
        assert (
            mine.json()["meta"]["total"] == 2
            and mine.headers["X-Tier-Lookback-Days"] == listed.headers["X-Tier-Lookback-Days"]
        )
        assert {(r["type"], r["value"]) for r in (await _all(seeded, key, feed["id"]))} == {
            ("domain", "c2-1.bad.example"),
            ("ipv4", "198.51.100.3"),
        }


async def test_severity_filters_the_list_its_exports_and_feeds(seeded: RunningServer) -> None:
    wanted = {r.value for r in records()[9:]}
    feed = (await _post(seeded, seeded.pro_key, {"name": "s", "filters": {"severity": "critical,high"}})).json()
    async with seeded.client(seeded.pro_key) as http:
        listed = await http.get("/api/v1/iocs", params={"severity": "high,critical", "limit": 100})
        blocklist = await http.get("/api/v1/iocs/blocklist", params={"severity": "critical"})
        bad = await http.get("/api/v1/iocs", params={"severity": "severe"})
    assert feed["filters"] == {"severity": ["critical", "high"]}
    fed = await _all(seeded, seeded.pro_key, feed["id"])
    assert {r["value"] for r in listed.json()["data"]} == wanted == {r["value"] for r in fed}
    assert {r["severity_label"] for r in listed.json()["data"]} == {"high", "critical"}
    assert [line for line in blocklist.text.splitlines() if not line.startswith("#")] == [records()[11].value]
    assert bad.status_code == 400 and bad.json()["error"]["details"]["parameter"] == "severity"


async def _all(server: RunningServer, key: str, feed_id: str) -> list[dict[str, Any]]:
    async with server.client(key) as http:
        return list((await http.get(f"{FEEDS}/{feed_id}/iocs")).json()["data"])


async def test_free_feeds_have_json_only(seeded: RunningServer) -> None:
    feed = (await _post(seeded, seeded.free_key, {"name": "f"})).json()
    assert set(feed["links"]) == {"self", "iocs"}
    async with seeded.client(seeded.free_key) as http:
        refused = await http.get(f"{FEEDS}/{feed['id']}/export/stix")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "insufficient_scope"


async def test_feed_exports_share_the_export_cache_and_revalidate(seeded: RunningServer) -> None:
    feed = (await _post(seeded, seeded.pro_key, {"name": "f", "filters": {"type": "ipv4"}})).json()
    url = f"{FEEDS}/{feed['id']}/export/stix"
    async with seeded.client(seeded.pro_key) as http:
        first = await http.get(url)
        assert first.status_code == 200 and first.headers["X-Cache"] == "miss"
        bundle = first.json()
        assert {o["pattern"] for o in bundle["objects"] if o["type"] == "indicator"} == {
            f"[ipv4-addr:value = '198.51.100.{n}']" for n in (0, 3, 6, 9)
        }
        again = await http.get(url, headers={"If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304 and again.headers["X-Cache"] == "hit"
        assert first.headers["X-Format-Cost-Multiplier"] == str(IOC_EXPORT_COST)
        await http.patch(f"{FEEDS}/{feed['id']}", json={"filters": {"type": "domain"}})
        changed = await http.get(url, headers={"If-None-Match": first.headers["ETag"]})
        assert changed.status_code == 200 and changed.headers["ETag"] != first.headers["ETag"]


async def test_feed_exports_are_precomputed(seeded: RunningServer) -> None:
    feed = (await _post(seeded, seeded.pro_key, {"name": "f", "filters": {"confidence": "high"}})).json()
    await _post(seeded, seeded.free_key, {"name": "free ones are not exported"})
    ctx = seeded.ctx
    wanted = await precompute.feed_requests(ctx.stores)
    assert {r.format for r in wanted} == set(EXPORTERS) and {r.tier for r in wanted} == {"pro"}
    await precompute.precompute_exports(ctx.stores, ctx.cache, utcnow(), ttl=600)
    async with seeded.client(seeded.pro_key) as http:
        for fmt in EXPORTERS:
            response = await http.get(f"{FEEDS}/{feed['id']}/export/{fmt}")
            assert response.status_code == 200 and response.headers["X-Cache"] == "hit", fmt


async def test_unknown_feed_and_format(server: RunningServer) -> None:
    async with server.client(server.pro_key) as http:
        assert (await http.get(f"{FEEDS}/{uuid.uuid4()}/export/stix")).status_code == 404
        feed = (await http.post(FEEDS, json={"name": "f"})).json()
        assert (await http.get(f"{FEEDS}/{feed['id']}/export/pdf")).status_code == 404
