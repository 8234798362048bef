"""Full walks: 25,000 objects with as_pages, records added mid-walk, and two processes serving one walk."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import cli_env, spawn_server
from taxii2client.v21 import Collection, as_pages

from store.records import Ioc, utcnow
from store.sqlite import sqlite_stores
from taxii.collections import stix_type_of
from taxii.media import TAXII_21

COLLECTIONS = "/api/taxii2/api/collections/"
TOTAL = 25_000


async def test_walk_returns_each_object_once_while_records_arrive(server, iocs, bearer, stix_valid) -> None:
    start = utcnow() - timedelta(days=30)
    seeded = iocs(TOTAL, first=start, step=timedelta(seconds=60))
    for at in range(0, TOTAL, 5000):
        await server.ctx.iocs.upsert_iocs(seeded[at:at + 5000])
    loop = asyncio.get_running_loop()
    added: list[Ioc] = []

    def store(coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=60)

    def walk() -> list[dict[str, Any]]:
        collection = Collection(f"{server.url}{COLLECTIONS}all-iocs/", auth=bearer(server.pro_key))
        objects: list[dict[str, Any]] = []
        # match[version]=all: every status (the month-old addresses have expired), the walk sees them all.
        for n, envelope in enumerate(as_pages(collection.get_objects, per_request=1000, version="all")):
            objects.extend(envelope.get("objects", []))
            if n in (3, 11, 20):  # new records mid-walk, and updates of records already handed out
                fresh = iocs(100, start=TOTAL + n * 100, first=utcnow())
                again = seeded[:50]
                for r in again:
                    r.last_seen = r.modified = utcnow()
                store(server.ctx.iocs.upsert_iocs(fresh + again))
                added.extend(fresh)
        return objects

    objects = await asyncio.to_thread(walk)
    ids = [o["id"] for o in objects]
    versions = [(o["id"], o["modified"]) for o in objects]
    assert len(versions) == len(set(versions))  # each version once
    assert set(ids) == {r.stix_id for r in seeded + added}
    # An update of a record already handed out is a new version, added when it was made: after every position
    # handed out, so the walk meets it again; every other record once.
    again = {i for i, n in Counter(ids).items() if n > 1}
    assert again and again <= {r.stix_id for r in seeded[:50]} and len(ids) == TOTAL + 300 + len(again)
    modified = [o["modified"] for o in objects]
    assert modified == sorted(modified)  # ascending date_added: each object's version is its date_added
    stix_valid(random.Random(7).sample(objects, 400) + [o for o in objects if o["type"] == "vulnerability"][:20])


async def test_limit_never_exceeds_the_server_maximum(server, iocs, taxii_http) -> None:
    await server.ctx.iocs.upsert_iocs(iocs(10_050, kinds=("ipv4",)))
    async with taxii_http(server.pro_key) as http:
        page = await http.get(COLLECTIONS + "ip-addresses/objects/", params={"limit": 50_000})
        rest = await http.get(COLLECTIONS + "ip-addresses/objects/", params={"next": page.json()["next"],
                                                                             "limit": 50_000})
    body = page.json()
    assert len(body["objects"]) == 10_000 and body["more"] is True
    assert rest.json()["more"] is False and len(rest.json()["objects"]) == 50


async def _seed_dir(data_dir: Path, rows: list[Any]) -> None:
    stores = sqlite_stores(data_dir / "ctiwire.sqlite3")
    await stores.open()
    await stores.iocs.upsert_iocs(rows)
    await stores.close()


@pytest.mark.slow  # several server processes
def test_two_processes_serve_pages_of_one_walk(tmp_path, iocs) -> None:
    rows = iocs(3_000)
    asyncio.run(_seed_dir(tmp_path, rows))
    env = cli_env(tmp_path)
    first = spawn_server(env, "--no-seed")
    try:
        second = spawn_server(env, "--no-seed")
    except BaseException:
        first.stop()
        raise
    try:
        key = json.loads((tmp_path / "demo-keys.json").read_text())["pro"]
        headers = {"Authorization": f"Bearer {key}", "Accept": TAXII_21}
        servers = [httpx.Client(base_url=s.url, headers=headers, timeout=60) for s in (first, second)]
        params: dict[str, Any] = {"limit": 400, "match[type]": "indicator"}
        seen: list[str] = []
        served_by: Counter[int] = Counter()
        for n in range(100):
            page = servers[n % 2].get(COLLECTIONS + "all-iocs/objects/", params=params)
            assert page.status_code == 200, page.text
            body = page.json()
            seen.extend(o["id"] for o in body.get("objects", []))
            served_by[n % 2] += 1
            if not body["more"]:
                break
            replay = servers[(n + 1) % 2].get(COLLECTIONS + "all-iocs/objects/", params=params)
            assert replay.content == page.content  # the same request gives the same page on either process
            params = {"limit": 400, "next": body["next"]}  # filters come back from the signed token
    finally:
        first.stop()
        second.stop()
    indicators = [r.stix_id for r in rows if stix_type_of(r.type) == "indicator"]
    assert len(seen) == len(set(seen)) == len(indicators) and set(seen) == set(indicators)
    assert served_by[0] >= 3 and served_by[1] >= 3
