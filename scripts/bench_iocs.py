"""scripts/bench iocs: GET /api/v1/iocs pages through HTTP, beside their ceilings.

In one run, with N synthetic IOC records (default 50,000) in the embedded SQLite store:
  1. a 10,000-row page through HTTP, auth and rate limiting included (rows/s, median of repeats), against
     two in-process ceilings on the same SQLite file, no HTTP: the issue's (the rows read as records and
     encoded with orjson) and the stricter one the ratio uses, since the records keep their API form
     stored: the fastest way to the same bytes, the stored forms of the same rows read and joined;
  2. a 100-row page under wrk (requests/s, p50), against a bare Tornado handler serving the same bytes
     (``--skip-load`` leaves this out, where wrk is not installed);
  3. the score's cost: the 10,000-row page read as the list handler streams it, with score and status,
     against the same page of stored forms alone (as before the lifecycle), alternated in one process;
  4. POST /api/v1/lookup with 1,000 stored values (values/s answered through HTTP, median of repeats), against
     the store's own point reads of the same values in one process (``IocStore.get_ioc``, one per value).
Prints a markdown table, the command, and the ratios as the last lines.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import benchlib  # noqa: E402
from support import cli_env, free_port, spawn_server  # noqa: E402

from server.iocs import STREAM_BATCH  # noqa: E402
from store.base import ioc_row_position, keyset_pages  # noqa: E402
from store.query import IocQuery  # noqa: E402
from store.records import Ioc  # noqa: E402
from store.sqlite import sqlite_stores  # noqa: E402
from store.sqlite.part import _tuples  # noqa: E402
from store.sqlite.queries import ioc_where  # noqa: E402

# The ceiling of the small page: the same bytes from memory (argv: port, file holding the body).
BARE_SERVER = r'''
import sys, asyncio, tornado.web
body = open(sys.argv[2], "rb").read()
class H(tornado.web.RequestHandler):
    def get(self):
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(body)
async def main():
    tornado.web.Application([(r"/", H)]).listen(int(sys.argv[1]), "127.0.0.1")
    await asyncio.Event().wait()
asyncio.run(main())
'''


def page_rate(client: benchlib.LeanClient, limit: int, repeats: int) -> float:
    """Rows/s of the page, median of ``repeats`` after one untimed request (a polling client's steady state:
    the page's count is then known, as it is for every poll after the first)."""
    client.get("/api/v1/iocs", {"limit": limit})
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        body, _ = client.get("/api/v1/iocs", {"limit": limit})
        elapsed = time.perf_counter() - start
        rates.append(len(orjson.loads(body)["data"]) / elapsed)
    return statistics.median(rates)


async def ceiling(path: Path, limit: int, repeats: int) -> float:
    """Rows/s of reading ``limit`` records from the database file and encoding them, in one process."""
    stores = sqlite_stores(path)
    await stores.open()
    rates = []
    try:
        for _ in range(repeats):
            start, rows = time.perf_counter(), 0
            async for batch in stores.iocs.iter_iocs(IocQuery(limit=limit)):
                for ioc in batch:
                    orjson.dumps(ioc.to_api())
                rows += len(batch)
            rates.append(rows / (time.perf_counter() - start))
    finally:
        await stores.close()
    return statistics.median(rates)


def stored_ceiling(path: Path, limit: int, repeats: int) -> float:
    """Rows/s of reading the stored API forms of the first ``limit`` rows and joining them, in one process."""
    with sqlite3.connect(path) as db:
        rates = []
        for _ in range(repeats):
            start = time.perf_counter()
            rows = db.execute("SELECT api_json FROM iocs ORDER BY first_seen, type, value LIMIT ?", (limit,)).fetchall()
            b'{"data":[' + b",".join(row[0] for row in rows) + b"]}"
            rates.append(len(rows) / (time.perf_counter() - start))
    return statistics.median(rates)


async def score_overhead(path: Path, limit: int, repeats: int) -> tuple[float, float, float]:
    """(rows/s with score and status, rows/s without, the median of their ratio within each pair of reads) of
    the same ``limit``-row page read the way the list
    handler streams it (``IocStore.iter_ioc_rows``: keyset batches of STREAM_BATCH, read ahead on the store's
    thread), alternated in one process: as the page is now, each stored form completed in SQL from its row's
    place on the score ladder (``store.sqlite.scores``), against the stored forms alone, as it was before
    (the stored forms are now one byte shorter, kept without the brace the page's SQL appends with the score).
    The ratio is taken pair by pair, the two reads a few milliseconds apart, so a burst of load from other
    processes weighs on both sides of a pair rather than on one side's median."""
    stores = sqlite_stores(path)
    await stores.open()
    iocs: Any = stores.iocs
    plain = "SELECT api_json FROM iocs WHERE {where} ORDER BY first_seen, type, value LIMIT ? OFFSET ?"

    def before(q: IocQuery, size: int) -> Awaitable[list[bytes]]:
        def fetch(db: sqlite3.Connection) -> list[bytes]:
            where, params = ioc_where(q, True)
            return [row[0] for row in _tuples(db, plain.format(where=where), [*params, size, q.offset])]

        return iocs._run(fetch)

    async def rate(pages: AsyncIterator[list[bytes]]) -> float:
        start, rows = time.perf_counter(), 0
        async for batch in pages:
            b",".join(batch)
            rows += len(batch)
        return rows / (time.perf_counter() - start)

    def stored_position(row: bytes) -> Any:  # a stored form lacks the brace its page's SQL appends
        return ioc_row_position(row + b"}")

    query = IocQuery(limit=limit)  # every status: both read the same rows
    rates: dict[str, list[float]] = {"with": [], "without": []}
    try:
        for _ in range(repeats):
            rates["without"].append(await rate(keyset_pages(query, STREAM_BATCH, before, stored_position)))
            rates["with"].append(await rate(stores.iocs.iter_ioc_rows(query, STREAM_BATCH)))
    finally:
        await stores.close()
    pairs = [w / wo for w, wo in zip(rates["with"], rates["without"], strict=True)]
    return statistics.median(rates["with"]), statistics.median(rates["without"]), statistics.median(pairs)


BULK_VALUES = 1_000


def bulk_sample(rows: list[Ioc]) -> list[tuple[str, str]]:
    """``BULK_VALUES`` stored (type, value) pairs spread over the whole set, every type among them."""
    step = max(len(rows) // BULK_VALUES, 1)
    return [(ioc.type, ioc.value) for ioc in rows[::step][:BULK_VALUES]]


def bulk_rate(client: benchlib.LeanClient, values: list[tuple[str, str]], repeats: int) -> float:
    """Values/s answered by one POST /api/v1/lookup of ``values``, median of ``repeats`` after one untimed
    request (which also reads the ATT&CK catalogue, once per process)."""
    payload = {"values": [value for _, value in values]}
    client.post_json("/api/v1/lookup", payload)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        body, _ = client.post_json("/api/v1/lookup", payload)
        elapsed = time.perf_counter() - start
        found = orjson.loads(body)["meta"]["found"]
        if found != len(values):
            raise RuntimeError(f"the bulk lookup found {found} of {len(values)} stored values")
        rates.append(len(values) / elapsed)
    return statistics.median(rates)


async def point_read_rate(path: Path, values: list[tuple[str, str]], repeats: int) -> float:
    """Values/s of the store's own point reads of ``values`` (one ``get_ioc`` each), in one process."""
    stores = sqlite_stores(path)
    await stores.open()
    rates = []
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            for ioc_type, value in values:
                if await stores.iocs.get_ioc(ioc_type, value) is None:
                    raise RuntimeError(f"{value} is not stored")
            rates.append(len(values) / (time.perf_counter() - start))
    finally:
        await stores.close()
    return statistics.median(rates)


def unloaded_p50(client: httpx.Client, n: int) -> float:
    """p50 (ms) of the 100-row page requested one at a time."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        client.get("/api/v1/iocs", params={"limit": 100}).raise_for_status()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iocs", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--skip-load", action="store_true", help="leave out the wrk measures of the 100-row page")
    args = parser.parse_args()
    if shutil.which("wrk") is None and not args.skip_load:
        sys.exit("wrk is not installed: apt-get install wrk (or run with --skip-load)")
    work = Path(tempfile.mkdtemp(prefix="ctiwire-bench-iocs-"))
    env = cli_env(work, CTIWIRE_RATE_LIMIT_SCALE="100000")
    rows = benchlib.synthetic_iocs(args.iocs, lambda i: i % 10000)
    asyncio.run(benchlib.seed_iocs(work, rows))
    sample = bulk_sample(rows)
    key = benchlib.pro_key(env)
    server = spawn_server(env, "--no-seed")
    benchlib.settle(server.process.pid)
    results: dict[str, float] = {}
    load: dict[str, float] | None = None
    try:
        headers = {"Authorization": f"Bearer {key}"}
        lean = benchlib.LeanClient(server.url, headers)
        results["http_10k"] = page_rate(lean, 10_000, args.repeats)
        results["bulk_http"] = bulk_rate(lean, sample, args.repeats)
        lean.close()
        with httpx.Client(base_url=server.url, headers=headers, timeout=300) as client:
            results["p50_alone"] = unloaded_p50(client, 200)
            small = client.get("/api/v1/iocs", params={"limit": 100}).raise_for_status().content
        (work / "page100.json").write_bytes(small)
        if not args.skip_load:
            load = benchlib.wrk(f"{server.url}/api/v1/iocs?limit=100", [f"Authorization: Bearer {key}"],
                                args.seconds, args.connections)
    finally:
        server.stop()
    ceiling_load = None if args.skip_load else bare_load(work / "page100.json", args)
    results["ceiling_10k"] = asyncio.run(ceiling(work / "ctiwire.sqlite3", 10_000, args.repeats))
    results["stored_10k"] = stored_ceiling(work / "ctiwire.sqlite3", 10_000, args.repeats)
    results["scored_10k"], results["unscored_10k"], results["score_pairs"] = asyncio.run(
        score_overhead(work / "ctiwire.sqlite3", 10_000, max(args.repeats * 3, 21)))
    results["bulk_points"] = asyncio.run(point_read_rate(work / "ctiwire.sqlite3", sample, args.repeats))
    report(results, load, ceiling_load, len(small), args)


def bare_load(page: Path, args: argparse.Namespace) -> dict[str, float]:
    """wrk against a bare Tornado handler serving the bytes of ``page``."""
    port = free_port()
    bare = subprocess.Popen([sys.executable, "-c", BARE_SERVER, str(port), str(page)])
    try:
        time.sleep(1.0)
        return benchlib.wrk(f"http://127.0.0.1:{port}/", [], args.seconds, args.connections)
    finally:
        bare.kill()


def report(r: dict[str, float], load: dict[str, float] | None, bare: dict[str, float] | None, size: int,
           args: argparse.Namespace) -> None:
    print(f"\n`scripts/bench iocs --iocs {args.iocs} --repeats {args.repeats} --seconds {args.seconds} "
          f"--connections {args.connections}{' --skip-load' if args.skip_load else ''}` ({os.cpu_count()} cores)\n")
    print("| measure | value |\n|---|---:|")
    print(f"| 10,000-row page through HTTP, rows/s (median) | {r['http_10k']:,.0f} |")
    print(f"| issue's ceiling: same rows read as records + orjson, one process, rows/s | {r['ceiling_10k']:,.0f} |")
    print(f"| ceiling: stored API forms of the same rows read and joined, one process, rows/s | "
          f"{r['stored_10k']:,.0f} |")
    print(f"| 10,000-row page as the list streams it, with score and status, one process, rows/s | "
          f"{r['scored_10k']:,.0f} |")
    print(f"| the same page without them (the stored forms alone, as before), rows/s | {r['unscored_10k']:,.0f} |")
    print(f"| 100-row page p50 requested one at a time, ms | {r['p50_alone']:.2f} |")
    if load is not None and bare is not None:
        print(f"| 100-row page ({size:,} bytes), requests/s at {args.connections} connections | {load['rps']:,.0f} |")
        print(f"| 100-row page p50 / p99, ms | {load['p50']:.2f} / {load['p99']:.2f} |")
        print(f"| ceiling: bare Tornado, same bytes, requests/s | {bare['rps']:,.0f} |")
        print(f"| non-2xx answers | {load['non2xx']:.0f} |")
    print(f"| POST /lookup of {BULK_VALUES:,} stored values through HTTP, values/s (median) | {r['bulk_http']:,.0f} |")
    print(f"| ceiling: the store's point reads of the same values, one process, values/s | {r['bulk_points']:,.0f} |")
    print(f"\n100-row page p50 one at a time = {r['p50_alone']:.2f} ms (target < 5 ms)")
    print(f"10,000-row page / issue's ceiling = {r['http_10k'] / r['ceiling_10k']:.2f}")
    print(f"ratio iocs_page_10k = {r['http_10k'] / r['stored_10k']:.2f} (target >= 0.5)")
    if load is not None and bare is not None:
        print(f"ratio iocs_page_100 = {load['rps'] / bare['rps']:.2f} (target >= 0.6)")
    print(f"ratio bulk_lookup = {r['bulk_http'] / r['bulk_points']:.2f} (target >= 0.5)")
    print(f"ratio ioc_score_overhead = {r['score_pairs']:.2f} (target >= 0.9)")


if __name__ == "__main__":
    main()
