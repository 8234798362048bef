"""Revocations and expiries reach TAXII pollers on every backend: a changed record is a new version of its
object, added when it came to be (TAXII 2.1 sections 3.4.1 and 5.4), so a poll with the last
``X-TAXII-Date-Added-Last`` as ``added_after`` receives it; pages in that order, read in small steps, hold
every version once."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import stix2
from mongo_support import backend_stores, server_backends
from taxii2client.v21 import Collection, as_pages

from store.records import Ioc, iso, utcnow
from taxii import objects as taxii_objects
from taxii.collections import stix_type_of
from taxii.media import STIX_21, taxii_time
from taxii.page_query import next_expiry
from tests.support import RunningServer, make_settings, start_server, stop_server

ALL = "/api/taxii2/api/collections/all-iocs/"


@pytest.fixture(params=server_backends())
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RunningServer]:
    running = await start_server(make_settings(tmp_path), backend_stores(request.param))
    yield running
    await stop_server(running)


def _since(days: int) -> str:
    return taxii_time(utcnow() - timedelta(days=days))


def _collection(server: RunningServer, bearer: Any) -> Collection:
    return Collection(f"{server.url}{ALL}", auth=bearer(server.pro_key))


def _poll(server: RunningServer, bearer: Any, added_after: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Objects and manifest of ``all-iocs`` after ``added_after``, as taxii2-client reads them."""
    collection = _collection(server, bearer)
    return collection.get_objects(added_after=added_after), collection.get_manifest(added_after=added_after)


def _entry(obj: dict[str, Any], date_added: datetime) -> dict[str, Any]:
    return {"id": obj["id"], "date_added": taxii_time(date_added), "version": obj["modified"], "media_type": STIX_21}


def _valid(stix_valid: Callable[[list[dict[str, Any]]], None], objects: list[dict[str, Any]]) -> None:
    """The strict validator, and stix2's own parser, accept each object."""
    stix_valid(objects)
    for obj in objects:
        assert stix2.parse(obj, allow_custom=False).id == obj["id"]


def _ms(at: datetime) -> datetime:
    """``at`` to the millisecond, as times are stored."""
    return at.replace(microsecond=at.microsecond // 1000 * 1000)


def _expiring(ioc: Ioc, until: datetime) -> Ioc:
    """``ioc`` last reported so long ago that its score falls below the threshold at ``until``."""
    seen = until - (ioc.valid_until - ioc.last_seen)
    return dataclasses.replace(ioc, first_seen=seen, last_seen=seen, modified=seen)


async def test_a_revocation_reaches_an_added_after_poller_as_a_new_version(
    server, iocs, bearer, stix_valid, taxii_http
) -> None:
    rows = iocs(12)
    await server.ctx.iocs.upsert_iocs(rows)
    target = next(r for r in rows if stix_type_of(r.type) == "indicator")
    async with taxii_http(server.pro_key) as http:
        first = await http.get(ALL + "objects/", params={"added_after": _since(30)})
        last = first.headers["X-TAXII-Date-Added-Last"]
        held = {o["id"]: o for o in first.json()["objects"]}
        assert target.stix_id in held and "revoked" not in held[target.stix_id]
        revoked = await server.ctx.iocs.revoke_ioc(target.type, target.value, "false positive", utcnow())
        assert revoked is not None
        polled, manifest = await asyncio.to_thread(_poll, server, bearer, last)
        headers = (await http.get(ALL + "objects/", params={"added_after": last})).headers
        after = await http.get(ALL + "objects/", params={"added_after": headers["X-TAXII-Date-Added-Last"]})
    [obj] = polled["objects"]
    assert obj["id"] == target.stix_id and obj["revoked"] is True
    assert obj["modified"] > held[target.stix_id]["modified"] and obj["created"] == held[target.stix_id]["created"]
    assert manifest == {"more": False, "objects": [_entry(obj, revoked.modified)]}
    assert headers["X-TAXII-Date-Added-First"] == headers["X-TAXII-Date-Added-Last"] == taxii_time(revoked.modified)
    assert headers["X-TAXII-Date-Added-Last"] > last and after.json() == {"more": False}
    _valid(stix_valid, [obj])


async def test_an_expiry_reaches_an_added_after_poller_at_its_valid_until(
    server, iocs, bearer, stix_valid, taxii_http, monkeypatch
) -> None:
    real = utcnow()
    domain = next(r for r in iocs(12) if r.type == "domain")
    expiring = _expiring(domain, real + timedelta(hours=1))
    await server.ctx.iocs.upsert_iocs([*(r for r in iocs(12) if r.type != "domain"), expiring])
    until = expiring.valid_until
    async with taxii_http(server.pro_key) as http:
        first = await http.get(ALL + "objects/", params={"added_after": _since(300)})
        last = first.headers["X-TAXII-Date-Added-Last"]
        held = {o["id"]: o for o in first.json()["objects"]}
        assert datetime.fromisoformat(held[expiring.stix_id]["valid_until"]) > real
        # Two hours on: the domain's valid_until has passed, nothing was written.
        monkeypatch.setattr(taxii_objects, "utcnow", lambda: utcnow() + timedelta(hours=2))
        polled, manifest = await asyncio.to_thread(_poll, server, bearer, last)
        headers = (await http.get(ALL + "objects/", params={"added_after": last})).headers
    [obj] = polled["objects"]
    assert obj["id"] == expiring.stix_id and "revoked" not in obj
    assert obj["modified"] == obj["valid_until"] > held[expiring.stix_id]["modified"]
    assert manifest == {"more": False, "objects": [_entry(obj, until)]}
    assert headers["X-TAXII-Date-Added-First"] == headers["X-TAXII-Date-Added-Last"] == taxii_time(until)
    _valid(stix_valid, [obj])


async def test_small_pages_hold_every_version_once_in_date_added_order(server, iocs, bearer) -> None:
    # A month of records an hour apart: the addresses have expired since (their date_added is their valid_until,
    # after their modified), the others are active; two are revoked (their date_added is the revocation).
    now = utcnow()
    rows = iocs(60, first=now - timedelta(days=30), step=timedelta(hours=6))
    await server.ctx.iocs.upsert_iocs(rows)
    for row in rows[7:9]:
        await server.ctx.iocs.revoke_ioc(row.type, row.value, "false positive", utcnow())
    held = [await server.ctx.iocs.get_ioc(r.type, r.value) for r in rows]
    records = [r for r in held if r is not None]
    statuses = {r.status(now) for r in records}
    assert statuses == {"active", "expired", "revoked"}
    assert any(r.date_added(now) == _ms(r.valid_until) > r.modified for r in records)

    def walk(limit: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        collection = _collection(server, bearer)
        pages = list(as_pages(collection.get_manifest, per_request=limit, added_after=_since(60)))
        objects = list(as_pages(collection.get_objects, per_request=limit, version="all"))
        return [m for p in pages for m in p.get("objects", [])], [o for p in objects for o in p.get("objects", [])]

    ordered = sorted(records, key=lambda r: (r.date_added(now), r.type, r.value))
    for limit in (1, 3, 7):
        manifest, objects = await asyncio.to_thread(walk, limit)
        assert [m["id"] for m in manifest] == [o["id"] for o in objects] == [r.stix_id for r in ordered]
        assert [m["date_added"] for m in manifest] == [taxii_time(r.date_added(now)) for r in ordered]
        assert [m["version"] for m in manifest] == [o["modified"] for o in objects]


async def test_a_repeated_poll_is_read_again_once_a_record_expired(server, iocs, taxii_http, monkeypatch) -> None:
    """A page is cached by the data version, which an expiry does not move: it holds until the next expiry."""
    real = utcnow()
    domain = next(r for r in iocs(12) if r.type == "domain")
    expiring = _expiring(domain, real + timedelta(hours=1))
    await server.ctx.iocs.upsert_iocs([expiring])
    assert await next_expiry(server.ctx.iocs, real) == expiring.valid_until
    async with taxii_http(server.pro_key) as http:
        first = await http.get(ALL + "manifest/", params={"added_after": _since(300)})
        last = first.headers["X-TAXII-Date-Added-Last"]
        polls = [await http.get(ALL + "manifest/", params={"added_after": last}) for _ in range(2)]
        monkeypatch.setattr(taxii_objects, "utcnow", lambda: utcnow() + timedelta(hours=2))
        later = await http.get(ALL + "manifest/", params={"added_after": last})
    assert [p.json() for p in polls] == [{"more": False}] * 2 and polls[1].headers["X-Cache"] == "hit"
    assert later.headers["X-Cache"] == "miss"
    assert later.json()["objects"][0]["date_added"] == taxii_time(expiring.valid_until)


async def _same_second(server: RunningServer, iocs: Callable[..., list[Ioc]]) -> tuple[datetime, Ioc, Ioc]:
    """(a whole second an hour ahead, a domain expiring 200 ms into it, an address written 500 ms into it), stored."""
    second = utcnow().replace(microsecond=0) + timedelta(hours=1)
    domain, address = (next(r for r in iocs(12) if r.type == kind) for kind in ("domain", "ipv4"))
    expiring = _expiring(domain, second + timedelta(milliseconds=200))
    at = second + timedelta(milliseconds=500)
    written = dataclasses.replace(address, first_seen=at, last_seen=at, modified=at)
    await server.ctx.iocs.upsert_iocs([expiring, written])
    assert second < expiring.valid_until < written.modified < written.valid_until
    return second, expiring, written


async def test_an_expiry_in_the_second_of_a_served_write_is_never_skipped(
    server, iocs, bearer, stix_valid, taxii_http, monkeypatch
) -> None:
    """A poll between an expiry and a later write of the same second serves both: statuses are read at the
    request's millisecond, as the stores keep times. Read at the whole second, the page left the expiry out
    and served the write, whose date_added, the poll's last, lies after it: a poll from there (TAXII 2.1
    section 3.4.1, ``added_after``) never received the expiry."""
    second, expiring, written = await _same_second(server, iocs)
    start = taxii_time(second - timedelta(minutes=1))
    monkeypatch.setattr(taxii_objects, "utcnow", lambda: second + timedelta(milliseconds=700))
    async with taxii_http(server.pro_key) as http:
        last = (await http.get(ALL + "objects/", params={"added_after": start})).headers["X-TAXII-Date-Added-Last"]
    first = await asyncio.to_thread(_poll, server, bearer, start)
    monkeypatch.setattr(taxii_objects, "utcnow", lambda: second + timedelta(seconds=2))
    then = await asyncio.to_thread(_poll, server, bearer, last)
    assert last == taxii_time(written.modified) and then == ({"more": False}, {"more": False})
    received = [
        (o, m)
        for polled, manifest in (first, then)
        for o, m in zip(polled.get("objects", []), manifest.get("objects", []), strict=True)
    ]
    assert [o["id"] for o, _ in received] == [expiring.stix_id, written.stix_id]
    obj, entry = received[0]
    assert obj["modified"] == obj["valid_until"] == iso(expiring.valid_until)
    assert entry == _entry(obj, expiring.valid_until)
    _valid(stix_valid, [o for o, _ in received])


async def test_a_cached_page_is_read_again_once_a_record_expired_within_the_second(
    server, iocs, taxii_http, monkeypatch
) -> None:
    """A page cached before an expiry is not served after it, however close: the page holds until the next
    valid_until after the millisecond it was read at; polls repeated before it are hits."""
    second, expiring, written = await _same_second(server, iocs)
    start = taxii_time(second - timedelta(minutes=1))

    async def poll(ms: int) -> Any:
        monkeypatch.setattr(taxii_objects, "utcnow", lambda: second + timedelta(milliseconds=ms))
        async with taxii_http(server.pro_key) as http:
            return await http.get(ALL + "manifest/", params={"added_after": start})

    before = [await poll(ms) for ms in (100, 150)]
    after = [await poll(ms) for ms in (300, 350)]
    assert [p.headers["X-Cache"] for p in before + after] == ["miss", "hit", "miss", "hit"]
    assert [m["id"] for m in before[1].json()["objects"]] == [written.stix_id]
    assert [m["id"] for m in after[1].json()["objects"]] == [expiring.stix_id, written.stix_id]
    assert after[1].json()["objects"][0]["date_added"] == taxii_time(expiring.valid_until)


async def test_status_and_min_score_choose_objects_as_on_the_ioc_list(server, iocs, stix_valid, taxii_http) -> None:
    # A month of records six hours apart: the addresses have expired, the rest are active, two are revoked.
    rows = iocs(60, first=utcnow() - timedelta(days=30), step=timedelta(hours=6))
    await server.ctx.iocs.upsert_iocs(rows)
    for row in rows[7:9]:
        await server.ctx.iocs.revoke_ioc(row.type, row.value, "false positive", utcnow())
    async with server.client(server.pro_key) as api, taxii_http(server.pro_key) as http:
        for params in (
            {"status": "expired,revoked"},
            {"status": "revoked"},
            {"min_score": "60"},
            {"status": "active,expired", "min_score": "40"},
        ):
            listed = (await api.get("/api/v1/iocs", params={"limit": 1000, **params})).json()["data"]
            served = await http.get(ALL + "objects/", params=params)
            assert served.status_code == 200, served.text
            assert {o["id"] for o in served.json()["objects"]} == {r["stix_id"] for r in listed}, params
        bad = [
            await http.get(ALL + path, params=p)
            for path in ("objects/", "manifest/")
            for p in ({"status": "gone"}, {"min_score": "101"})
        ]
        revoked = (await http.get(ALL + "objects/", params={"status": "revoked"})).json()["objects"]
    assert [(b.status_code, b.json()["http_status"], b.json()["details"]["parameter"]) for b in bad] == [
        (400, "400", "status"),
        (400, "400", "min_score"),
    ] * 2
    assert sorted(o["id"] for o in revoked) == sorted(r.stix_id for r in rows[7:9])
    assert all(o["revoked"] is True for o in revoked)
    _valid(stix_valid, revoked)
