"""POST /api/v1/sightings through real HTTP on every backend: one report or a list, defanged values, whole-body
refusals, one account counted once, a Free key within its budget, counts in the IOC resource and the lookups,
false positives left out of that account's exports and TAXII only, the revocation quorum, and the STIX
sighting objects under the strict validator."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import orjson
import pytest
from stix_support import dangling_refs, validate_stix
from support import delivered_key

from store import accounts
from store.records import Ioc, utcnow
from taxii.media import TAXII_21

URL = "/api/v1/sightings"


def _ioc(ioc_type: str, value: str) -> Ioc:
    seen = utcnow() - timedelta(minutes=5)
    return Ioc(ioc_type, value, "high", "CISA", "government", seen, seen, seen, sources=["CISA"])


STORED = [_ioc("domain", "c2.bad.example"), _ioc("ipv4", "45.1.0.7"), _ioc("url", "http://c2.bad.example/gate")]


async def _post(server: Any, key: str, body: Any) -> Any:
    async with server.client(key) as http:
        return await http.post(URL, content=orjson.dumps(body), headers={"Content-Type": "application/json"})


async def _pro_key(server: Any, email: str) -> str:
    await accounts.create_user(server.ctx.accounts, email, "pro")
    return str((await delivered_key(server.ctx.accounts, email, "main")).secret)


async def test_one_report_and_a_list_with_defanged_values(server: Any) -> None:
    await server.ctx.iocs.upsert_iocs(STORED)
    one = await _post(server, server.pro_key, {"value": "c2[.]bad(dot)example", "kind": "seen", "note": "proxy"})
    assert one.status_code == 200, one.text
    assert one.json() == {
        "meta": {"count": 1, "cost": 1},
        "data": [
            {
                "input": "c2[.]bad(dot)example",
                "type": "domain",
                "value": "c2.bad.example",
                "kind": "seen",
                "known": True,
                "sightings": 1,
                "false_positives": 0,
            }
        ],
    }
    listed = await _post(
        server,
        server.free_key,
        [
            {
                "value": "hxxp://c2[.]bad[.]example/gate",
                "type": "url",
                "kind": "seen",
                "observed_at": "2026-01-02T03:04:05Z",
            },
            {"value": "45[.]1[.]0[.]7", "kind": "false_positive"},
            {"value": "203.0.113.9", "kind": "seen"},
            {"value": "C2.BAD.EXAMPLE", "kind": "seen"},
        ],
    )
    assert listed.status_code == 200 and listed.headers["X-RateLimit-Cost"] == "1"
    assert [(r["value"], r["known"], r["sightings"], r["false_positives"]) for r in listed.json()["data"]] == [
        ("http://c2.bad.example/gate", True, 1, 0),
        ("45.1.0.7", True, 0, 1),
        ("203.0.113.9", False, 1, 0),
        ("c2.bad.example", True, 2, 0),
    ]
    kept = await server.ctx.stores.sightings.list_sightings("url", "http://c2.bad.example/gate")
    assert [(s.kind, s.observed_at.isoformat()) for s in kept] == [("seen", "2026-01-02T03:04:05+00:00")]


async def test_one_accounts_repeated_reports_count_once(server: Any) -> None:
    await server.ctx.iocs.upsert_iocs(STORED)
    for _ in range(3):
        answer = await _post(server, server.pro_key, [{"value": "45.1.0.7", "kind": "seen"}] * 4)
    assert [r["sightings"] for r in answer.json()["data"]] == [1] * 4
    stored = await server.ctx.iocs.get_ioc("ipv4", "45.1.0.7")
    assert stored.sightings == 1 and len(await server.ctx.stores.sightings.list_sightings("ipv4", "45.1.0.7")) == 12
    answer = await _post(server, server.free_key, {"value": "45.1.0.7", "kind": "seen"})
    assert answer.json()["data"][0]["sightings"] == 2


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        (
            [
                {"value": "c2.bad.example", "kind": "seen"},
                {"value": "c2.bad.example", "kind": "liked"},
                {"value": "not an indicator", "kind": "seen"},
                {"value": "45.1.0.7", "type": "domain", "kind": "seen"},
                {"value": "45.1.0.7", "kind": "seen", "extra": 1},
                "45.1.0.7",
                {"value": "45.1.0.7", "kind": "seen", "observed_at": "2999-01-01T00:00:00Z"},
                {"value": "45.1.0.7", "kind": "seen", "note": "x" * 501},
                {"kind": "seen"},
            ],
            [
                (1, "kind"),
                (2, "value"),
                (3, "value"),
                (4, "extra"),
                (5, None),
                (6, "observed_at"),
                (7, "note"),
                (8, "value"),
            ],
        ),
        ([], []),
        ([{"value": "45.1.0.7", "kind": "seen"}] * 1001, []),
    ],
)
async def test_an_invalid_list_is_refused_whole(server: Any, body: Any, errors: list[tuple[int, str | None]]) -> None:
    response = await _post(server, server.pro_key, body)
    error = response.json()["error"]
    assert response.status_code == 400 and error["code"] == "invalid_sightings", response.text
    assert [(e["index"], e["field"]) for e in error["details"]["errors"]] == errors
    assert await server.ctx.stores.sightings.tallies() == {}  # nothing recorded


async def test_bodies_that_are_no_json_or_too_large(server: Any) -> None:
    async with server.client(server.pro_key) as http:
        broken = await http.post(URL, content=b"{not json", headers={"Content-Type": "application/json"})
        huge = await http.post(URL, content=b"[" + b" " * (3 * 1024 * 1024) + b"]")
    assert broken.status_code == 400 and broken.json()["error"]["code"] == "invalid_body"
    assert huge.status_code == 413 and huge.json()["error"]["code"] == "payload_too_large"


async def test_a_free_key_reports_within_its_budget(server: Any) -> None:
    hundred = [{"value": f"198.51.100.{n}", "kind": "false_positive"} for n in range(100)]
    allowed = await _post(server, server.free_key, hundred)
    assert allowed.status_code == 200 and allowed.headers["X-RateLimit-Cost"] == "1"
    thousand = [{"value": f"198.51.{n // 256}.{n % 256}", "kind": "seen"} for n in range(1000)]
    refused = await _post(server, server.free_key, thousand)  # 10 units after 2 of the minute's 10
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limit_exceeded"
    assert len(await server.ctx.stores.sightings.tallies()) == 100  # the refused list was not recorded
    again = await _post(server, server.free_key, thousand[:100])  # what is left of the minute still reports
    assert again.status_code == 200 and len(await server.ctx.stores.sightings.tallies()) == 200


async def test_counts_show_in_the_ioc_resource_and_the_lookups(server: Any) -> None:
    await server.ctx.iocs.upsert_iocs(STORED)
    other = await _pro_key(server, "other@test.local")
    for key in (server.pro_key, server.free_key):
        await _post(server, key, {"value": "c2.bad.example", "kind": "seen"})
    await _post(server, other, {"value": "c2.bad.example", "kind": "false_positive"})
    async with server.client(server.pro_key) as http:
        listed = (await http.get("/api/v1/iocs/search", params={"q": "c2.bad.example", "type": "domain"})).json()
        single = (await http.get("/api/v1/lookup", params={"value": "c2[.]bad[.]example"})).json()
        bulk = (await http.post("/api/v1/lookup", json={"values": ["c2.bad.example", "45.1.0.7"]})).json()
    [record] = [r for r in listed["data"] if r["value"] == "c2.bad.example"]
    assert (record["sightings"], record["false_positives"]) == (2, 1)
    assert (single["sightings"], single["false_positives"]) == (2, 1)
    assert [(r["sightings"], r["false_positives"]) for r in bulk["data"]] == [(2, 1), (0, 0)]


async def _blocklist(server: Any, key: str) -> set[str]:
    async with server.client(key) as http:
        response = await http.get("/api/v1/iocs/blocklist")
    assert response.status_code == 200, response.text
    return {line for line in response.text.splitlines() if line and not line.startswith("#")}


async def _taxii_ids(server: Any, key: str) -> set[str]:
    async with server.client(key) as http:
        response = await http.get("/api/taxii2/api/collections/all-iocs/objects/", headers={"Accept": TAXII_21})
    assert response.status_code == 200, response.text
    return {o["id"] for o in response.json().get("objects", [])}


async def test_a_false_positive_leaves_that_accounts_exports_and_taxii_at_once(server: Any) -> None:
    await server.ctx.iocs.upsert_iocs(STORED)
    other = await _pro_key(server, "other@test.local")
    hidden = STORED[1]
    assert hidden.value in await _blocklist(server, server.pro_key)  # cached now, before the report
    assert hidden.stix_id in await _taxii_ids(server, server.pro_key)
    await _post(server, server.pro_key, {"value": "45.1.0.7", "kind": "false_positive"})
    mine, theirs = await _blocklist(server, server.pro_key), await _blocklist(server, other)
    assert theirs - mine == {hidden.value} and {STORED[0].value, "c2.bad.example"} <= mine
    assert await _taxii_ids(server, other) - await _taxii_ids(server, server.pro_key) == {hidden.stix_id}
    async with server.client(server.pro_key) as http:
        bundle = validate_stix((await http.get("/api/v1/iocs/stix")).content)
    assert hidden.stix_id not in {o["id"] for o in bundle["objects"]}


async def test_three_accounts_false_positives_revoke_it_for_everyone(server: Any) -> None:
    await server.ctx.iocs.upsert_iocs(STORED)
    third, fourth = await _pro_key(server, "third@test.local"), await _pro_key(server, "fourth@test.local")
    bystander = await _pro_key(server, "bystander@test.local")
    target = STORED[2]
    report = {"value": "hxxp://c2[.]bad[.]example/gate", "kind": "false_positive"}
    for key in (server.pro_key, server.pro_key, server.free_key):
        await _post(server, key, report)
    held = await server.ctx.iocs.get_ioc("url", target.value)
    assert held.false_positives == 2 and not held.revoked  # two distinct accounts, one of them twice
    assert target.value in await _blocklist(server, bystander)
    await _post(server, third, report)
    revoked = await server.ctx.iocs.get_ioc("url", target.value)
    assert revoked.revoked and revoked.revoked_reason == "reported as a false positive by 3 accounts"
    assert target.value not in await _blocklist(server, bystander)  # for everyone, not only the reporters
    async with server.client(bystander) as http:
        polled = await http.get("/api/v1/iocs", params={"since": held.modified.isoformat(), "status": "revoked"})
    assert [(r["value"], r["status"]) for r in polled.json()["data"]] == [(target.value, "revoked")]
    await _post(server, fourth, report)
    again = await server.ctx.iocs.get_ioc("url", target.value)
    assert again.false_positives == 4 and again.revoked_at == revoked.revoked_at  # the first verdict stands


async def test_the_stix_export_carries_valid_sighting_objects(server: Any) -> None:
    await server.ctx.iocs.upsert_iocs(STORED)
    await _post(server, server.free_key, [{"value": "c2.bad.example", "kind": "seen"}])
    await _post(
        server,
        server.pro_key,
        [{"value": "c2.bad.example", "kind": "seen"}, {"value": "45.1.0.7", "kind": "false_positive"}],
    )
    async with server.client(server.pro_key) as http:
        bundle = validate_stix((await http.get("/api/v1/iocs/stix")).content)
    sightings = [o for o in bundle["objects"] if o["type"] == "sighting"]
    assert [(s["sighting_of_ref"], s["count"]) for s in sightings] == [(STORED[0].stix_id, 2)]
    assert dangling_refs(bundle["objects"]) == set()
