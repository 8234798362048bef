"""Indicators with a life, through real HTTP on every backend: a score that decays with time since the last
report, expiry out of the default lists and exports, a re-report that revives, and a revocation that
reaches a date poller, a TAXII client asking for every version (taxii2-client, strict STIX validator,
stix2.parse) and the live stream."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from datetime import datetime, timedelta
from typing import Any

import orjson
import pytest
import requests
from conformance.factories import ioc
from pymisp import MISPEvent
from stix_support import validate_stix
from stream_support import StreamReader
from support import RunningServer
from taxii2client.v21 import Collection, as_pages

from server import exports as server_exports
from server import iocs as server_iocs
from store import events
from store.records import Ioc, iso, utcnow

OLD, FRESH = "stale-c2.example", "fresh-c2.example"


def _record(value: str, days_ago: float) -> Ioc:
    at = utcnow() - timedelta(days=days_ago)
    return ioc(value, first_seen=at, last_seen=at, modified=at)


async def _rows(server: RunningServer, **params: Any) -> dict[str, dict[str, Any]]:
    async with server.client(server.pro_key) as http:
        answer = await http.get("/api/v1/iocs", params={"limit": 100, **params})
    assert answer.status_code == 200, answer.text
    return {row["value"]: row for row in answer.json()["data"]}


async def _export_values(server: RunningServer, fmt: str) -> str:
    async with server.client(server.pro_key) as http:
        answer = await http.get(f"/api/v1/iocs/{fmt}")
    assert answer.status_code == 200, answer.text
    return answer.text


async def test_an_old_report_scores_lower_expires_and_leaves_the_defaults(server: RunningServer) -> None:
    await server.ctx.iocs.upsert_iocs([_record(OLD, 40), _record(FRESH, 0)])
    every = await _rows(server, status="active,expired,revoked")
    old, fresh = every[OLD], every[FRESH]
    assert old["score"] < fresh["score"] and fresh["status"] == "active" and old["status"] == "expired"
    assert old["valid_until"] < iso(utcnow()) < fresh["valid_until"]
    assert set(await _rows(server)) == {FRESH}  # the default: active records
    assert set(await _rows(server, status="expired")) == {OLD}
    assert set(await _rows(server, min_score=fresh["score"])) == {FRESH}
    for fmt in ("stix", "misp", "cef", "openioc"):
        body = await _export_values(server, fmt)
        assert FRESH in body and OLD not in body, fmt


async def test_a_new_report_revives_an_expired_record(server: RunningServer) -> None:
    await server.ctx.iocs.upsert_iocs([_record(OLD, 40)])
    before = (await _rows(server, status="expired"))[OLD]
    await server.ctx.iocs.upsert_iocs([dataclasses.replace(_record(OLD, 0), sources=["Another feed"])])
    after = (await _rows(server))[OLD]
    assert after["status"] == "active" and after["score"] > before["score"]
    assert after["valid_until"] > before["valid_until"]
    assert OLD in await _export_values(server, "stix")


async def test_an_expiry_reaches_a_date_poller(server: RunningServer) -> None:
    # valid 33 days from its last report: expired within the poll's window, without a write since
    await server.ctx.iocs.upsert_iocs([_record(OLD, 34)])
    polled = await _rows(server, since=iso(utcnow() - timedelta(days=2)))
    assert polled[OLD]["status"] == "expired" and polled[OLD]["modified"] == polled[OLD]["valid_until"]
    assert OLD not in await _rows(server, since=iso(utcnow() - timedelta(hours=1)))


async def test_a_revocation_reaches_pollers_taxii_and_the_stream(server: RunningServer) -> None:
    await server.ctx.iocs.upsert_iocs([_record(FRESH, 3)])
    since = iso(utcnow())
    async with (
        server.client(server.pro_key) as client,
        client.stream("GET", "/api/v1/stream", params={"kinds": "ioc-revoked"}) as response,
    ):
        assert response.status_code == 200
        stream = StreamReader(response)
        await asyncio.sleep(0.2)
        revoked = await events.revoke(server.ctx.stores, "domain", FRESH, "sinkholed", utcnow())
        event = await stream.next()
    assert revoked is not None
    assert event.event == "ioc-revoked" and event.data["value"] == FRESH and event.data["status"] == "revoked"
    polled = await _rows(server, modified_since=since)
    assert polled[FRESH]["status"] == "revoked" and polled[FRESH]["score"] == 0
    assert polled[FRESH]["revoked_reason"] == "sinkholed" and polled[FRESH]["modified"] >= since
    assert FRESH not in await _rows(server)
    objects = await asyncio.to_thread(_taxii_every_version, server)
    found = [o for o in objects if o.get("name") == f"domain: {FRESH}"]
    assert len(found) == 1 and found[0]["revoked"] is True and found[0]["modified"] >= since
    # stix2-validator strict and stix2.parse, on the served object
    validate_stix(orjson.dumps({"type": "bundle", "id": f"bundle--{uuid.uuid4()}", "objects": found}))


def _taxii_every_version(server: RunningServer) -> list[dict[str, Any]]:
    def bearer(request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {server.pro_key}"
        return request

    collection = Collection(f"{server.url}/api/taxii2/api/collections/all-iocs/", auth=bearer)
    return [
        o for page in as_pages(collection.get_objects, per_request=100, version="all") for o in page.get("objects", [])
    ]


async def test_an_expiry_in_the_second_of_a_polled_write_is_never_skipped(server: RunningServer, monkeypatch) -> None:
    """A poll by ``since`` between an expiry and a later write of the same second returns both: statuses are read
    at the request's millisecond, as the stores keep times. Read at the whole second, the poll returned the write
    alone, and a poller passing its ``modified``, the newest, back as ``since`` never received the expiry."""
    second, expiring = await _expiry_then_write_in_one_second(server)
    received: list[dict[str, Any]] = []
    since = iso(second - timedelta(minutes=1))
    for ms in (700, 2000):
        monkeypatch.setattr(server_iocs, "utcnow", lambda ms=ms: second + timedelta(milliseconds=ms))
        polled = list((await _rows(server, since=since)).values())
        received += polled
        since = max([since, *(row["modified"] for row in polled)])
    assert {row["value"] for row in received} == {FRESH, OLD}  # the write twice: ``since`` is inclusive
    [expiry] = [row for row in received if row["value"] == OLD]
    assert expiry["status"] == "expired" and expiry["modified"] == expiry["valid_until"] == iso(expiring.valid_until)


async def _expiry_then_write_in_one_second(server: RunningServer) -> tuple[datetime, Ioc]:
    """OLD expiring 200 ms into a whole second an hour ahead, FRESH written 500 ms into it: (that second, OLD)."""
    second = utcnow().replace(microsecond=0) + timedelta(hours=1)
    old, at = _record(OLD, 0), second + timedelta(milliseconds=500)
    seen = second + timedelta(milliseconds=200) - (old.valid_until - old.last_seen)
    expiring = dataclasses.replace(old, first_seen=seen, last_seen=seen, modified=seen)
    await server.ctx.iocs.upsert_iocs([expiring, dataclasses.replace(_record(FRESH, 0), last_seen=at, modified=at)])
    assert second < expiring.valid_until < at
    return second, expiring


async def test_an_export_polled_by_since_never_skips_an_expiry_of_the_second_it_served(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for a STIX export polled by ``since``: its indicators are chosen and dated at the request's
    millisecond, so the newest ``modified`` it holds, passed back, lies after no expiry it left out."""
    second, expiring = await _expiry_then_write_in_one_second(server)
    indicators: list[dict[str, Any]] = []
    since = iso(second - timedelta(minutes=1))
    for ms in (700, 2000):
        monkeypatch.setattr(server_exports, "utcnow", lambda ms=ms: second + timedelta(milliseconds=ms))
        async with server.client(server.pro_key) as http:
            answer = await http.get("/api/v1/iocs/stix", params={"since": since})
        assert answer.status_code == 200, answer.text
        polled = [o for o in validate_stix(answer.content)["objects"] if o["type"] == "indicator"]
        indicators += polled
        since = max([since, *(o["modified"] for o in polled)])
    [expiry] = [o for o in indicators if OLD in o["pattern"]]
    assert expiry["modified"] == expiry["valid_until"] == iso(expiring.valid_until)


async def test_a_cached_export_is_built_again_once_one_of_its_records_expired(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An expiry changes the default export without a write: the cached document holds until the first
    ``valid_until`` among its records, then the export is read again and leaves the expired record out."""
    expiring, lasting = _record(OLD, 0), dataclasses.replace(_record(FRESH, 0), confidence="high")
    await server.ctx.iocs.upsert_iocs([expiring, lasting])
    assert expiring.valid_until < lasting.valid_until
    answers = []
    for offset in (-2.0, -1.0, 1.0):
        at = expiring.valid_until + timedelta(seconds=offset)
        monkeypatch.setattr(server_exports, "utcnow", lambda at=at: at)
        async with server.client(server.pro_key) as http:
            answer = await http.get("/api/v1/iocs/stix")
        assert answer.status_code == 200, answer.text
        patterns = [o["pattern"] for o in validate_stix(answer.content)["objects"] if o["type"] == "indicator"]
        answers.append((answer.headers["X-Cache"], sorted(OLD if OLD in p else FRESH for p in patterns)))
    assert answers == [("miss", [FRESH, OLD]), ("hit", [FRESH, OLD]), ("miss", [FRESH])]


async def test_every_format_with_a_place_carries_score_status_and_valid_until(server: RunningServer) -> None:
    # store.ioctypes.LIFECYCLE_PLACES: STIX valid_until and revoked, MISP to_ids and machine tags, CEF cn1 and
    # deviceCustomDate1; each read back from what /iocs says of the same records.
    gone = "gone-c2.example"
    await server.ctx.iocs.upsert_iocs([_record(OLD, 40), _record(FRESH, 0), _record(gone, 1)])
    assert await events.revoke(server.ctx.stores, "domain", gone, "sinkholed", utcnow()) is not None
    every = {"status": "active,expired,revoked"}
    rows = await _rows(server, **every)
    async with server.client(server.pro_key) as http:
        stix, misp, cef = [
            (await http.get(f"/api/v1/iocs/{fmt}", params=every)).content for fmt in ("stix", "misp", "cef")
        ]
    indicators = {o["name"].split(": ", 1)[1]: o for o in validate_stix(stix)["objects"] if o["type"] == "indicator"}
    event = MISPEvent(strict_validation=True)  # PyMISP's own loader, which checks its schema
    event.load(orjson.loads(misp))
    attributes = {a.value: a for a in event.attributes}
    lines = {line.split("cs1=", 1)[1].split(" ", 1)[0]: line for line in cef.decode().splitlines() if "cs1=" in line}
    for value, row in rows.items():
        assert indicators[value]["valid_until"] == row["valid_until"] and indicators[value].get("revoked", False) is (
            row["status"] == "revoked"
        )
        tags = {t.name for t in attributes[value].tags}
        assert {
            f'ctiwire:decay-score="{row["score"]}"',
            f'ctiwire:status="{row["status"]}"',
            f'ctiwire:valid-until="{row["valid_until"]}"',
        } <= tags
        assert attributes[value].to_ids is (row["status"] == "active")
        until = int(datetime.fromisoformat(row["valid_until"]).timestamp() * 1000)
        assert f"deviceCustomDate1={until}" in lines[value]
        assert (f"cn1={row['score']}" in lines[value]) is (row["score"] > 0)
    assert {r["status"] for r in rows.values()} == {"active", "expired", "revoked"}
