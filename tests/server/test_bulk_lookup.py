"""POST /api/v1/lookup through real HTTP on every backend: values answered in order, tier limits and
lookbacks, rate-limit units, and the bounds of the request body."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest
from conformance.factories import article

from config import tiers
from store.records import Ioc, MitreTechnique, utcnow

URL = "/api/v1/lookup"
# Spellings of stored values as analysts paste them, each with the record it names.
DEFANGED = {
    "45[.]1[.]0[.]7": "45.1.0.7",
    "hxxp://c2-7[.]bad(dot)example/gate?id=7": "http://c2-7.bad.example/gate?id=7",
    "C2-7.BAD.EXAMPLE": "c2-7.bad.example",
    "ops[at]mail-7[.]example": "ops@mail-7.example",
}


def _ioc(kind: str, value: str, age: timedelta = timedelta(minutes=5), **fields: Any) -> Ioc:
    seen = utcnow() - age
    return Ioc(kind, value, "high", "CISA", "government", seen, seen, seen, sources=["CISA"], **fields)


def _stored(n: int) -> list[Ioc]:
    """Record ``n`` of each of four types."""
    return [
        _ioc("ipv4", f"45.1.0.{n}"),
        _ioc("domain", f"c2-{n}.bad.example"),
        _ioc("url", f"http://c2-{n}.bad.example/gate?id={n}"),
        _ioc("email", f"ops@mail-{n}.example"),
    ]


def _mixed(count: int) -> Iterator[tuple[str, str, str | None]]:
    """(input, expected result, expected normalised value) cycling found, defanged, unknown and invalid values."""
    for i in range(count):
        n = i % 50
        yield [
            (f"45.1.0.{n}", "found", f"45.1.0.{n}"),
            (f"c2-{n}.bad[.]example", "found", f"c2-{n}.bad.example"),
            (f"203.0.113.{n}", "not_found", f"203.0.113.{n}"),
            (f"unknown-{i}.example", "not_found", f"unknown-{i}.example"),
            ("0" if i % 2 else "not an indicator", "invalid", None),
            (f"{i:064x}", "not_found", f"{i:064x}"),
            (f"hxxps://c2-{n}[.]bad[.]example/x", "not_found", f"https://c2-{n}.bad.example/x"),
            (f"ops(at)mail-{n}(dot)example", "found", f"ops@mail-{n}.example"),
        ][i % 8]


async def _post(server: Any, key: str, body: Any) -> Any:
    async with server.client(key) as http:
        return await http.post(URL, content=orjson.dumps(body), headers={"Content-Type": "application/json"})


async def test_a_thousand_mixed_values_answer_in_order(server: Any) -> None:
    await server.ctx.iocs.upsert_iocs([ioc for n in range(50) for ioc in _stored(n)])
    expected = list(_mixed(998)) + [("x" * 3000, "invalid", None)] + [("45.1.0.3", "found", "45.1.0.3")]
    response = await _post(server, server.pro_key, {"values": [raw for raw, _, _ in expected]})
    assert response.status_code == 200, response.text
    body = response.json()
    assert [(r["input"], r["result"], r.get("value")) for r in body["data"]] == expected
    outcomes = [result for _, result, _ in expected]
    assert body["meta"] == {
        "count": 1000,
        "found": outcomes.count("found"),
        "not_found": outcomes.count("not_found"),
        "invalid": outcomes.count("invalid"),
        "cost": 10,
    }
    assert response.headers["X-RateLimit-Cost"] == "10"
    invalid = [r for r in body["data"] if r["result"] == "invalid"]
    assert {r["reason"] for r in invalid} == {
        "is not a recognised indicator (IP, domain, URL, hash, e-mail or CVE)",
        "is longer than 2,048 characters",
    }
    assert all(set(r) == {"input", "result", "reason"} for r in invalid)


async def test_each_answer_is_what_get_lookup_answers(server: Any) -> None:
    await server.ctx.iocs.upsert_iocs(_stored(7))
    response = await _post(server, server.free_key, {"values": [*DEFANGED, "198.51.100.1"]})
    async with server.client(server.free_key) as http:
        singles = [(await http.get(URL, params={"value": raw})).json() for raw in [*DEFANGED, "198.51.100.1"]]
    results = response.json()["data"]
    assert [r["value"] for r in results] == [*DEFANGED.values(), "198.51.100.1"]
    for result, single in zip(results, singles, strict=True):
        assert {k: v for k, v in result.items() if k not in ("input", "result")} == single
    assert [r["result"] for r in results] == ["found"] * 4 + ["not_found"]
    assert results[0]["reporting_sources"] == ["CISA"] and results[0]["first_seen"]


async def test_the_free_plan_looks_up_at_most_a_hundred(server: Any) -> None:
    hundred = [f"198.51.100.{n}" for n in range(100)]
    allowed = await _post(server, server.free_key, {"values": hundred})
    refused = await _post(server, server.free_key, {"values": [*hundred, "198.51.100.200"]})
    assert allowed.status_code == 200 and allowed.headers["X-RateLimit-Cost"] == "1"
    assert len(allowed.json()["data"]) == 100
    error = refused.json()["error"]
    assert refused.status_code == 400 and error["code"] == "invalid_parameter"
    assert error["details"] == {"parameter": "values", "max_items": 100}
    too_many = await _post(server, server.pro_key, {"values": ["198.51.100.1"] * 1001})
    assert too_many.status_code == 400 and too_many.json()["error"]["details"]["max_items"] == 1000


@pytest.mark.parametrize(
    ("tier", "found"),
    [("free", {"fresh.window.example"}), ("pro", {"fresh.window.example", "week-old.window.example"})],
)
async def test_the_bulk_lookup_keeps_to_the_tier_lookbacks(server: Any, tier: str, found: set[str]) -> None:
    recent, month_old = (
        article(1, published_at=utcnow() - timedelta(hours=1)),
        article(2, published_at=utcnow() - timedelta(days=30)),
    )
    await server.ctx.articles.upsert_articles([recent, month_old])
    await server.ctx.iocs.upsert_iocs(
        [
            _ioc("domain", "fresh.window.example", article_ids=[recent.id, month_old.id]),
            _ioc("domain", "week-old.window.example", timedelta(days=7)),
            _ioc("domain", "stale.window.example", timedelta(days=400)),
        ]
    )
    key = server.free_key if tier == "free" else server.pro_key
    values = ["fresh.window.example", "week-old.window.example", "stale.window.example"]
    response = await _post(server, key, {"values": values})
    results = response.json()["data"]
    assert {r["value"] for r in results if r["result"] == "found"} == found
    assert response.headers["X-Tier-Lookback-Days"] == str(tiers.TIERS[tier].ioc_lookback_days)
    shown = {a["id"] for a in results[0]["related_articles"]}
    assert shown == ({recent.id} if tier == "free" else {recent.id, month_old.id})  # article lookback 7 / 365 days


async def test_technique_names_come_from_the_catalogue_without_an_article(server: Any) -> None:
    named = article(
        3,
        published_at=utcnow() - timedelta(hours=1),
        mitre_techniques=[MitreTechnique("T1059", "Named by the article", "execution", "high")],
    )
    await server.ctx.articles.upsert_articles([named])
    await server.ctx.iocs.upsert_iocs(
        [_ioc("domain", "named.example", techniques=["T1071.001", "T1059"], article_ids=[named.id])]
    )
    response = await _post(server, server.pro_key, {"values": ["named.example"]})
    techniques = response.json()["data"][0]["mitre_techniques"]
    assert {t["id"]: t["name"] for t in techniques} == {"T1059": "Named by the article", "T1071.001": "Web Protocols"}


@pytest.fixture
def pro_25(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Pro tier of 25 requests a minute: three bulk lookups of 1,000 values (10 units each) exceed it."""
    monkeypatch.setitem(tiers._TABLE, "pro", replace(tiers.PRO, requests_per_minute=25))


async def test_a_bulk_lookup_costs_a_unit_per_hundred_values(server: Any, pro_25: None) -> None:
    values = [f"198.51.{n // 256}.{n % 256}" for n in range(1000)]
    answers = [await _post(server, server.pro_key, {"values": values[:size]}) for size in (1000, 101, 1000, 1000)]
    assert [(a.status_code, a.headers.get("X-RateLimit-Cost")) for a in answers[:3]] == [
        (200, "10"),
        (200, "2"),
        (200, "10"),
    ]
    # 25 - 10, then - 2, then - 10 (a turn of the minute in between only lowers the count)
    assert [int(a.headers["X-RateLimit-Remaining"]) for a in answers[:3]] in ([15, 13, 3], [15, 13, 4], [15, 14, 4])
    assert answers[3].status_code == 429 and answers[3].json()["error"]["code"] == "rate_limit_exceeded"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", "invalid_body"),
        (b"", "invalid_body"),
        (b"[]", "invalid_parameter"),
        (b'{"value": "1.2.3.4"}', "invalid_parameter"),
        (b'{"values": "1.2.3.4"}', "invalid_parameter"),
        (b'{"values": []}', "invalid_parameter"),
        (b'{"values": ["1.2.3.4", 5]}', "invalid_parameter"),
    ],
)
async def test_malformed_bodies_answer_400_with_the_envelope(server: Any, body: bytes, code: str) -> None:
    async with server.client(server.pro_key) as http:
        response = await http.post(URL, content=body, headers={"Content-Type": "application/json"})
    error = response.json()["error"]
    assert response.status_code == 400 and error["code"] == code and error["request_id"]
    assert code == "invalid_body" or error["details"]["parameter"] == "values"


async def test_a_declared_huge_body_is_refused_before_it_is_read(server: Any) -> None:
    parts = urlsplit(server.url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(
        f"POST {URL} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.pro_key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: 50000000\r\n\r\n".encode()
    )
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 30)  # the server answers and closes, the body unsent
    writer.close()
    head, _, payload = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413")
    assert orjson.loads(payload)["error"]["code"] == "payload_too_large"


async def test_a_chunked_body_over_the_limit_is_refused(server: Any) -> None:
    async def chunks() -> Any:
        yield b'{"values": ["'
        for _ in range(40):
            yield b"a" * 65536
        yield b'"]}'

    async with server.client(server.pro_key) as http:
        response = await http.post(URL, content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and response.json()["error"]["details"] == {"max_bytes": 2 * 1024 * 1024}


async def test_a_wrong_method_names_both_served_methods(server: Any) -> None:
    async with server.client(server.pro_key) as http:
        response = await http.put(URL, content=b"{}")
    assert response.status_code == 405 and response.headers["Allow"] == "GET, POST"
