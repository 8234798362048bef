"""Objects, manifest, object and versions endpoints with filters, polled by taxii2-client and httpx."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

from taxii2client.v21 import Collection, as_pages

from exporters.base import ArticleRef, ExportContext
from exporters.stix import stix_object
from store.query import IocQuery
from store.records import Article, Ioc, iso, utcnow
from taxii.collections import stix_type_of
from taxii.media import taxii_time

COLLECTIONS = "/api/taxii2/api/collections/"


def _article(n: int, when: datetime) -> Article:
    return Article(id=f"00000000-0000-4000-8000-{n:012d}", title=f"Campaign report {n}",
                   url=f"https://news.example/report-{n}", canonical_url=f"https://news.example/report-{n}",
                   summary="A report.", published_at=when, fetched_at=when, modified_at=when, created_at=when,
                   source_name=f"Source {n}")


async def _seed(server: Any, iocs: Any, count: int = 40) -> list[Ioc]:
    """``count`` records of every type, two days old, one second apart; every fifth cites articles."""
    when = utcnow() - timedelta(days=3)  # one date for both: cited articles are ordered newest first
    articles = [_article(1, when), _article(2, when)]
    await server.ctx.articles.upsert_articles(articles)
    rows = iocs(count)
    for n, row in enumerate(rows):
        row.modified += timedelta(milliseconds=n)  # distinct versions, for match[version]
        if n % 5 == 0:
            row.article_ids = [a.id for a in articles]
    await server.ctx.iocs.upsert_iocs(rows)
    return rows


def _expected(rows: list[Ioc]) -> list[dict[str, Any]]:
    """What the STIX exporter builds for these records (same ids, same article references)."""
    refs = {f"00000000-0000-4000-8000-{n:012d}": ArticleRef(f"Campaign report {n}", f"https://news.example/report-{n}",
                                                            f"Source {n}") for n in (1, 2)}
    now = utcnow()
    ctx = ExportContext(generated_at=now, since=now - timedelta(days=365), until=now, tier="pro", articles=refs)
    return [stix_object(r, ctx) for r in _ordered(rows)]


def _ordered(rows: list[Ioc]) -> list[Ioc]:
    """In TAXII order: by date_added (the current version's: these active records' modified), type, value."""
    now = utcnow()
    return sorted(rows, key=lambda r: (r.date_added(now), r.type, r.value))


def _collection(server: Any, bearer: Any, cid: str) -> Collection:
    return Collection(f"{server.url}{COLLECTIONS}{cid}/", auth=bearer(server.pro_key))


async def test_all_iocs_are_the_exporters_objects_in_date_added_order(server, iocs, bearer, stix_valid,
                                                                      taxii_http) -> None:
    rows = await _seed(server, iocs)
    envelope = await asyncio.to_thread(lambda: _collection(server, bearer, "all-iocs").get_objects())
    expected = _expected(rows)
    assert envelope == {"more": False, "objects": expected}
    assert {o["type"] for o in expected} == {"indicator", "vulnerability", "attack-pattern"}
    citing = sum(bool(r.article_ids) and stix_type_of(r.type) == "indicator" for r in rows)  # every fifth
    assert citing and sum("external_references" in o and o["type"] == "indicator" for o in expected) == citing
    stix_valid(envelope["objects"])
    async with taxii_http(server.pro_key) as http:
        response = await http.get(COLLECTIONS + "all-iocs/objects/", params={"limit": 5})
    ordered = _ordered(rows)
    assert response.headers["X-TAXII-Date-Added-First"] == taxii_time(ordered[0].modified)
    assert response.headers["X-TAXII-Date-Added-Last"] == taxii_time(ordered[4].modified)
    assert response.headers["X-TAXII-Date-Added-Last"].endswith("000Z") and len(ordered) == 40


async def test_each_collection_holds_its_types(server, iocs, bearer) -> None:
    rows = await _seed(server, iocs)
    wanted = {"ip-addresses": {"ipv4", "ipv6"}, "file-hashes": {"md5", "sha1", "sha256", "sha512"},
              "domains": {"domain"}, "urls": {"url"}, "cves": {"cve"}, "attack-patterns": {"mitre-attack"}}

    def poll() -> dict[str, list[str]]:
        return {cid: [o["id"] for o in _collection(server, bearer, cid).get_objects().get("objects", [])]
                for cid in wanted}

    got = await asyncio.to_thread(poll)
    for cid, types in wanted.items():
        assert got[cid] == [o["id"] for o in _expected([r for r in rows if r.type in types])]
    assert all(i.startswith("vulnerability--") for i in got["cves"]) and got["cves"]
    assert all(i.startswith("attack-pattern--") for i in got["attack-patterns"]) and got["attack-patterns"]


async def test_match_filters_or_within_and_across(server, iocs, bearer) -> None:
    rows = await _seed(server, iocs)
    expected = _expected(rows)
    by_type = {t: [o for o in expected if o["type"] == t] for t in ("indicator", "vulnerability")}
    two = [expected[3], expected[17]]
    one_version = expected[9]["modified"]
    cases: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
        ({"type": "vulnerability"}, by_type["vulnerability"]),
        ({"type": ["indicator", "vulnerability", "attack-pattern"]}, expected),
        ({"type": "attack-pattern"}, [o for o in expected if o["type"] == "attack-pattern"]),
        ({"type": "malware"}, []),
        ({"id": [two[1]["id"], two[0]["id"]]}, two),
        ({"id": two[0]["id"], "type": "vulnerability"}, [o for o in two[:1] if o["type"] == "vulnerability"]),
        ({"version": one_version}, [expected[9]]),
        ({"version": [one_version, expected[11]["modified"]]}, [expected[9], expected[11]]),
        ({"version": "first"}, expected), ({"version": "last"}, expected), ({"version": "all"}, expected),
        ({"spec_version": "2.0"}, []), ({"spec_version": ["2.0", "2.1"]}, expected),
    ]

    def poll() -> list[dict[str, Any]]:
        collection = _collection(server, bearer, "all-iocs")
        return [collection.get_objects(**kwargs) for kwargs, _ in cases]

    for (kwargs, want), got in zip(cases, await asyncio.to_thread(poll), strict=True):
        assert got.get("objects", []) == want, kwargs
        assert got["more"] is False  # an empty result is still an envelope: {"more": false}


async def test_added_after_polls_only_what_is_new(server, iocs, taxii_http) -> None:
    await _seed(server, iocs, 12)
    async with taxii_http(server.pro_key) as http:
        first = await http.get(COLLECTIONS + "all-iocs/objects/")
        last = first.headers["X-TAXII-Date-Added-Last"]
        empty = await http.get(COLLECTIONS + "all-iocs/objects/", params={"added_after": last})
        fresh = iocs(3, start=1000, first=utcnow())
        await server.ctx.iocs.upsert_iocs(fresh)
        later = await http.get(COLLECTIONS + "all-iocs/objects/", params={"added_after": last})
    assert len(first.json()["objects"]) == 12
    assert empty.json() == {"more": False}
    # An empty page does not echo added_after as its first and last date (it has no object)
    assert "X-TAXII-Date-Added-First" not in empty.headers and "X-TAXII-Date-Added-Last" not in empty.headers
    assert [o["id"] for o in later.json()["objects"]] == [o["id"] for o in _expected(fresh)]
    assert later.headers["X-TAXII-Date-Added-First"] == taxii_time(fresh[0].modified)


async def test_manifest_object_and_versions(server, iocs, bearer, taxii_http) -> None:
    rows = await _seed(server, iocs, 30)
    expected = _expected(rows)
    cve = next(o for o in expected if o["type"] == "vulnerability")

    def poll() -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
        collection = _collection(server, bearer, "all-iocs")
        pages = list(as_pages(collection.get_manifest, per_request=7))
        return ([m for p in pages for m in p.get("objects", [])], collection.get_object(cve["id"]),
                collection.object_versions(cve["id"]))

    manifest, one, versions = await asyncio.to_thread(poll)
    ordered = _ordered(rows)
    assert manifest == [{"id": o["id"], "date_added": taxii_time(r.modified), "version": o["modified"],
                         "media_type": "application/stix+json;version=2.1"} for o, r in zip(expected, ordered,
                                                                                           strict=True)]
    assert one == {"more": False, "objects": [cve]}
    assert versions == {"more": False, "versions": [cve["modified"]]}
    async with taxii_http(server.pro_key) as http:
        wrong_collection = await http.get(f"{COLLECTIONS}ip-addresses/objects/{cve['id']}/")
        other_version = await http.get(f"{COLLECTIONS}cves/objects/{cve['id']}/",
                                       params={"match[version]": "2020-01-01T00:00:00Z"})
        headers = await http.get(f"{COLLECTIONS}cves/objects/{cve['id']}/versions/")
    assert wrong_collection.status_code == 404 and other_version.status_code == 404
    assert headers.headers["X-TAXII-Date-Added-First"] == taxii_time(datetime.fromisoformat(cve["modified"]))


async def test_id_requests_read_only_the_records_they_name(server, iocs, taxii_http, monkeypatch) -> None:
    rows = await _seed(server, iocs, 300)
    read: list[Ioc] = []
    probes: list[IocQuery] = []
    iter_iocs = server.ctx.iocs.iter_iocs

    def counting(query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[Ioc]]:
        async def batches() -> AsyncIterator[list[Ioc]]:
            async for batch in iter_iocs(query, batch_size):
                if query.stix_ids:
                    read.extend(batch)
                else:
                    probes.append(query)
                yield batch
        return batches()

    monkeypatch.setattr(server.ctx.iocs, "iter_iocs", counting)
    first, last = rows[0], rows[-1]  # the last record is the one a scan would reach at the end
    async with taxii_http(server.pro_key) as http:
        one = await http.get(f"{COLLECTIONS}all-iocs/objects/{last.stix_id}/")
        versions = await http.get(f"{COLLECTIONS}all-iocs/objects/{last.stix_id}/versions/")
        matched = await http.get(COLLECTIONS + "all-iocs/objects/", params={"match[id]": f"{last.stix_id},"
                                                                                      f"{first.stix_id}"})
        missing = await http.get(f"{COLLECTIONS}all-iocs/objects/indicator--{'0' * 8}-0000-5000-8000-{'0' * 12}/")
    assert [o["id"] for o in one.json()["objects"]] == [last.stix_id]
    assert versions.json() == {"more": False, "versions": [one.json()["objects"][0]["modified"]]}
    assert [o["id"] for o in matched.json()["objects"]] == [first.stix_id, last.stix_id]
    assert missing.status_code == 404
    # Four requests, four records read in all: the store found them by index instead of scanning 300.
    assert sorted(r.value for r in read) == sorted([last.value, last.value, first.value, last.value])
    # Besides, each page built asked for the next expiry (taxii.page_query.next_expiry): one record at most.
    assert probes and all(q.limit == 1 and q.statuses == ("expired",) for q in probes)


async def test_tier_lookback_applies(server, iocs, taxii_http) -> None:
    old = iocs(2, start=500, first=utcnow() - timedelta(days=400))
    recent = iocs(2, start=600)
    await server.ctx.iocs.upsert_iocs(old + recent)
    async with taxii_http(server.pro_key) as http:
        plain = await http.get(COLLECTIONS + "all-iocs/objects/")
        clamped = await http.get(COLLECTIONS + "all-iocs/objects/", params={"added_after": "2000-01-01T00:00:00Z"})
        old_one = await http.get(f"{COLLECTIONS}all-iocs/objects/{old[0].stix_id}/")
    assert [o["id"] for o in plain.json()["objects"]] == [r.stix_id for r in recent]
    assert clamped.json() == plain.json() and clamped.headers["X-Tier-Lookback-Clamped"] == "true"
    assert clamped.headers["X-Tier-Lookback-Days"] == "365" and old_one.status_code == 404


async def test_malformed_requests_are_400(server, iocs, taxii_http) -> None:
    await _seed(server, iocs, 10)
    url = COLLECTIONS + "all-iocs/objects/"
    async with taxii_http(server.pro_key) as http:
        page = (await http.get(url, params={"limit": 3, "match[type]": "indicator"})).json()
        token = page["next"]
        cases = [
            ({"added_after": "last week"}, "added_after"), ({"limit": str(2**31)}, "limit"), ({"limit": "x"}, "limit"),
            ({"match[id]": "indicator--123"}, "match[id]"), ({"match[foo]": "bar"}, "match[foo]"),
            ({"match[version]": "latest"}, "match[version]"),
            ({"next": token[:-3] + ("xyz" if not token.endswith("xyz") else "abc")}, "next"),
            ({"next": token, "match[type]": "vulnerability"}, "next"),
        ]
        for params, name in cases:
            response = await http.get(url, params=params)
            assert response.status_code == 400, (params, response.text)
            assert response.json()["details"]["parameter"] == name
        other_collection = await http.get(COLLECTIONS + "domains/objects/", params={"next": token})
        manifest = await http.get(COLLECTIONS + "all-iocs/manifest/", params={"next": token})
        same = await http.get(url, params={"next": token, "match[type]": "indicator"})
        bare = await http.get(url, params={"next": token})
    assert other_collection.status_code == manifest.status_code == 400
    assert other_collection.json()["error_code"] == "invalid_next"
    assert same.status_code == 200 and same.json() == bare.json()  # filters repeated or taken from the token


def test_taxii_time_of_exporter_dates_round_trips() -> None:
    when = datetime(2026, 5, 6, 7, 8, 9, 10000, tzinfo=UTC)
    assert taxii_time(datetime.fromisoformat(iso(when))) == "2026-05-06T07:08:09.010000Z"


async def test_the_rest_stix_id_of_every_type_names_its_taxii_object(server, iocs, taxii_http) -> None:
    """A REST result leads straight to its STIX object: a CVE's stix_id is its vulnerability's id."""
    await _seed(server, iocs, 20)
    async with server.client(server.pro_key) as rest:
        records = (await rest.get("/api/v1/iocs", params={"limit": 100})).json()["data"]
    assert {r["type"] for r in records} >= {"cve", "ipv4", "domain"}
    async with taxii_http(server.pro_key) as http:
        for record in records:
            found = await http.get(f"{COLLECTIONS}all-iocs/objects/{record['stix_id']}/")
            assert found.status_code == 200, record
            obj = found.json()["objects"][0]
            assert obj["type"] == {"cve": "vulnerability", "mitre-attack": "attack-pattern"}.get(record["type"],
                                                                                               "indicator")
