"""scripts/bench iocs: GET /api/v1/iocs pages through HTTP, beside their ceilings.

In one run, with N synthetic IOC records (default 50,000) in the embedded SQLite store:
  1. a 10,000-row page through HTTP, auth and rate limiting included (rows/s, median of repeats), against
     two in-process ceilings on the same SQLite file, no HTTP: the issue's (the rows read as records and
     encoded with orjson) and the stricter one the ratio uses, since the records keep their API form
     stored: the fastest way to the same bytes, the stored forms of the same rows read and joined;
  2. a 100-row page under wrk (requests/s, p50), against a bare Tornado handler serving the same bytes.
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
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import benchlib  # noqa: E402
from support import cli_env, free_port, spawn_server  # noqa: E402

from store.query import IocQuery  # noqa: E402
from store.sqlite import sqlite_stores  # noqa: E402

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
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk")
    work = Path(tempfile.mkdtemp(prefix="ctiwire-bench-iocs-"))
    env = cli_env(work, CTIWIRE_RATE_LIMIT_SCALE="100000")
    asyncio.run(benchlib.seed_iocs(work, benchlib.synthetic_iocs(args.iocs, lambda i: i % 10000)))
    key = benchlib.pro_key(env)
    server = spawn_server(env, "--no-seed")
    benchlib.settle(server.process.pid)
    results: dict[str, float] = {}
    try:
        headers = {"Authorization": f"Bearer {key}"}
        lean = benchlib.LeanClient(server.url, headers)
        results["http_10k"] = page_rate(lean, 10_000, args.repeats)
        lean.close()
        with httpx.Client(base_url=server.url, headers=headers, timeout=300) as client:
            results["p50_alone"] = unloaded_p50(client, 200)
            small = client.get("/api/v1/iocs", params={"limit": 100}).raise_for_status().content
        (work / "page100.json").write_bytes(small)
        load = benchlib.wrk(f"{server.url}/api/v1/iocs?limit=100", [f"Authorization: Bearer {key}"], args.seconds,
                            args.connections)
    finally:
        server.stop()
    port = free_port()
    bare = subprocess.Popen([sys.executable, "-c", BARE_SERVER, str(port), str(work / "page100.json")])
    try:
        time.sleep(1.0)
        ceiling_load = benchlib.wrk(f"http://127.0.0.1:{port}/", [], args.seconds, args.connections)
    finally:
        bare.kill()
    results["ceiling_10k"] = asyncio.run(ceiling(work / "ctiwire.sqlite3", 10_000, args.repeats))
    results["stored_10k"] = stored_ceiling(work / "ctiwire.sqlite3", 10_000, args.repeats)
    report(results, load, ceiling_load, len(small), args)


def report(r: dict[str, float], load: dict[str, float], bare: dict[str, float], size: int,
           args: argparse.Namespace) -> None:
    print(f"\n`scripts/bench iocs --iocs {args.iocs} --repeats {args.repeats} --seconds {args.seconds} "
          f"--connections {args.connections}` ({os.cpu_count()} cores)\n")
    print("| measure | value |\n|---|---:|")
    print(f"| 10,000-row page through HTTP, rows/s (median) | {r['http_10k']:,.0f} |")
    print(f"| issue's ceiling: same rows read as records + orjson, one process, rows/s | {r['ceiling_10k']:,.0f} |")
    print(f"| ceiling: stored API forms of the same rows read and joined, one process, rows/s | "
          f"{r['stored_10k']:,.0f} |")
    print(f"| 100-row page p50 requested one at a time, ms | {r['p50_alone']:.2f} |")
    print(f"| 100-row page ({size:,} bytes), requests/s at {args.connections} connections | {load['rps']:,.0f} |")
    print(f"| 100-row page p50 / p99, ms | {load['p50']:.2f} / {load['p99']:.2f} |")
    print(f"| ceiling: bare Tornado, same bytes, requests/s | {bare['rps']:,.0f} |")
    print(f"| non-2xx answers | {load['non2xx']:.0f} |")
    print(f"\n100-row page p50 one at a time = {r['p50_alone']:.2f} ms (target < 5 ms)")
    print(f"10,000-row page / issue's ceiling = {r['http_10k'] / r['ceiling_10k']:.2f}")
    print(f"ratio iocs_page_10k = {r['http_10k'] / r['stored_10k']:.2f} (target >= 0.5)")
    print(f"ratio iocs_page_100 = {load['rps'] / bare['rps']:.2f} (target >= 0.6)")


if __name__ == "__main__":
    main()
