"""scripts/bench taxii: ctiwire's TAXII 2.1 server beside medallion 3.0.0 and a bare Tornado ceiling.

In one run, with 10,000 indicators in the embedded SQLite store (every server is one process):
  1. a full walk of the collection with limit=1000 on ctiwire (auth and rate limiting on), timed;
  2. the same walk on medallion, the OASIS reference server, memory backend, loaded with the very
     objects ctiwire served (and their date_added), timed and bounded by --medallion-timeout;
  3. wrk on one 100-object page of each, and on a bare Tornado handler returning ctiwire's page bytes
     (the ceiling: what Tornado costs with no auth, no store and no encoding).
Prints a markdown table and the command. Needs `wrk` (Debian package).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import benchlib  # noqa: E402
from benchlib import settle, wrk  # noqa: E402
from support import cli_env, free_port, spawn_server  # noqa: E402

from taxii.media import TAXII_21, parse_timestamp, taxii_time  # noqa: E402

COLLECTION = "all-iocs"
CTIWIRE_OBJECTS = f"/api/taxii2/api/collections/{COLLECTION}/objects/"
MEDALLION_OBJECTS = f"/api1/collections/{COLLECTION}/objects/"
BARE_SERVER = r'''
import sys, asyncio, tornado.web
body = open(sys.argv[2], "rb").read()
class H(tornado.web.RequestHandler):
    def get(self):
        self.set_header("Content-Type", "application/taxii+json;version=2.1")
        self.finish(body)
async def main():
    tornado.web.Application([(r"/", H)]).listen(int(sys.argv[1]), "127.0.0.1")
    await asyncio.Event().wait()
asyncio.run(main())
'''


async def seed(data_dir: Path, n: int) -> None:
    """``n`` indicators of five types, one minute apart, within the Pro lookback."""
    await benchlib.seed_iocs(data_dir, benchlib.synthetic_iocs(n, lambda i: n - i))


def walk(base: str, path: str, headers: dict[str, str], limit: int, budget: float,
         auth: tuple[str, str] | None = None) -> tuple[list[dict[str, Any]], float, bool]:
    """Page through with ``next``; (objects, seconds, finished) with at most ``budget`` seconds spent."""
    objects: list[dict[str, Any]] = []
    started = time.perf_counter()
    params: dict[str, Any] = {"limit": limit}
    with httpx.Client(base_url=base, headers=headers, auth=auth) as http:
        while True:
            left = budget - (time.perf_counter() - started)
            if left <= 0:
                return objects, time.perf_counter() - started, False
            try:
                response = http.get(path, params=params, timeout=left)
            except httpx.TimeoutException:
                return objects, time.perf_counter() - started, False
            response.raise_for_status()
            body = response.json()
            objects.extend(body.get("objects", []))
            if not body.get("more"):
                return objects, time.perf_counter() - started, True
            params = {"limit": limit, "next": body["next"]}


def medallion_config(work: Path, objects: list[dict[str, Any]], port: int, max_page: int) -> Path:
    """A medallion memory-backend data file holding ``objects``, with date_added = modified (= ctiwire's: the
    current version's)."""
    manifest = [{"id": o["id"], "date_added": taxii_time(parse_timestamp(o["modified"])), "version": o["modified"],
                 "media_type": "application/stix+json;version=2.1"} for o in objects]
    data = {
        "/discovery": {"title": "medallion", "default": f"http://127.0.0.1:{port}/api1/",
                       "api_roots": [f"http://127.0.0.1:{port}/api1/"]},
        "api1": {"information": {"title": "api1", "versions": [TAXII_21], "max_content_length": 9765625},
                 "status": [],
                 "collections": [{"id": COLLECTION, "title": "All IOCs", "can_read": True, "can_write": False,
                                  "media_types": ["application/stix+json;version=2.1"], "objects": objects,
                                  "manifest": manifest}]},
    }
    (work / "medallion-data.json").write_text(json.dumps(data))
    config = {"backend": {"module": "medallion.backends.memory_backend", "module_class": "MemoryBackend",
                          "filename": str(work / "medallion-data.json"), "session_timeout": 3600},
              "users": {"bench": "bench"}, "taxii": {"max_page_size": max_page}}
    (work / "medallion.json").write_text(json.dumps(config))
    return work / "medallion.json"


def start(args: list[str], url: str, procs: list[subprocess.Popen[bytes]], timeout: float = 60) -> None:
    procs.append(subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit(f"{args[0]} did not start within {timeout:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--limit", type=int, default=1000, help="page size of the walks")
    parser.add_argument("--page", type=int, default=100, help="page size under wrk")
    parser.add_argument("--seconds", type=int, default=8, help="wrk duration per target")
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--medallion-timeout", type=float, default=150, help="bound on medallion's walk (s)")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk")
    work = Path(tempfile.mkdtemp(prefix="ctiwire-bench-taxii-"))
    procs: list[subprocess.Popen[Any]] = []
    try:
        run(args, work, procs)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, work: Path, procs: list[subprocess.Popen[Any]]) -> None:
    asyncio.run(seed(work, args.objects))
    env = cli_env(work, CTIWIRE_LOG_LEVEL="WARNING", CTIWIRE_RATE_LIMIT_SCALE="100000")
    key = benchlib.pro_key(env)
    server = spawn_server(env, "--no-seed")
    procs.append(server.process)
    uncached = spawn_server({**env, "CTIWIRE_CACHE_ENABLED": "false"}, "--no-seed")
    procs.append(uncached.process)
    for proc in (server.process, uncached.process):
        settle(proc.pid)
    headers = {"Authorization": f"Bearer {key}", "Accept": TAXII_21}
    objects, first_walk, done = walk(server.url, CTIWIRE_OBJECTS, headers, args.limit, 120)
    assert done and len(objects) == args.objects, (done, len(objects))
    _, repeat_walk, _ = walk(server.url, CTIWIRE_OBJECTS, headers, args.limit, 120)  # pages from the cache
    _, uncached_walk, _ = walk(uncached.url, CTIWIRE_OBJECTS, headers, args.limit, 120)
    page = httpx.get(server.url + CTIWIRE_OBJECTS, params={"limit": args.page}, headers=headers)
    (work / "page.json").write_bytes(page.content)

    port = free_port()
    medallion = [str(Path(sys.executable).parent / "medallion"), "--port", str(port),
                 str(medallion_config(work, objects, port, max(args.limit, args.page)))]
    start(medallion, f"http://127.0.0.1:{port}/taxii2/", procs)
    med_objects, theirs, med_done = walk(f"http://127.0.0.1:{port}", MEDALLION_OBJECTS, {"Accept": TAXII_21},
                                         args.limit, args.medallion_timeout, auth=("bench", "bench"))
    busy = procs.pop()  # a walk cut short leaves medallion busy: load a fresh one for wrk
    busy.terminate()
    busy.wait(timeout=20)
    start(medallion, f"http://127.0.0.1:{port}/taxii2/", procs)
    bare_port = free_port()
    start([sys.executable, "-c", BARE_SERVER, str(bare_port), str(work / "page.json")],
          f"http://127.0.0.1:{bare_port}/", procs)

    page_query = f"?limit={args.page}"
    ours = [f"Authorization: Bearer {key}", f"Accept: {TAXII_21}"]
    rows: list[Row] = [
        ("ctiwire (page cache)", f"{first_walk:.2f} first, {repeat_walk:.2f} repeated", args.objects / first_walk,
         wrk(server.url + CTIWIRE_OBJECTS + page_query, ours, args.seconds, args.connections)),
        ("ctiwire (cache disabled)", f"{uncached_walk:.2f}", args.objects / uncached_walk,
         wrk(uncached.url + CTIWIRE_OBJECTS + page_query, ours, args.seconds, args.connections)),
        ("medallion 3.0.0 (memory backend)",
         f"{theirs:.2f}" if med_done else f"> {theirs:.0f} (stopped after {len(med_objects):,} objects)",
         len(med_objects) / theirs,
         wrk(f"http://127.0.0.1:{port}{MEDALLION_OBJECTS}{page_query}",
             ["Authorization: Basic YmVuY2g6YmVuY2g=", f"Accept: {TAXII_21}"], args.seconds, args.connections)),
        ("ceiling: bare Tornado, same page bytes", "-", None,
         wrk(f"http://127.0.0.1:{bare_port}/", [], args.seconds, args.connections)),
    ]
    print_table(rows, args, first_walk)
    # The object endpoint reads its record through the store's STIX id index, not a scan of the window.
    by_id = wrk(f"{uncached.url}{CTIWIRE_OBJECTS}{objects[-1]['id']}/", ours, args.seconds, args.connections)
    print(f"object by id (cache disabled, the newest of {args.objects:,}): {by_id['rps']:,.1f} requests/s, "
          f"p99 {by_id['p99']:.1f} ms, non-2xx {by_id['non2xx']:.0f}")
    print(f"\nratio taxii_page = {rows[0][3]['rps'] / rows[3][3]['rps']:.2f} (target >= 0.75)")


Row = tuple[str, str, float | None, dict[str, float]]


def print_table(rows: list[Row], args: argparse.Namespace, first_walk: float) -> None:
    print(f"\n`scripts/bench taxii --objects {args.objects} --limit {args.limit} --page {args.page} --seconds "
          f"{args.seconds} --connections {args.connections} --medallion-timeout {args.medallion_timeout:g}` "
          f"({os.cpu_count()} cores; one process per server)\n")
    print(f"| server | walk of {args.objects:,} (limit {args.limit}), s | objects/s | "
          f"{args.page}-object page, requests/s | p99 ms | non-2xx |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, seconds, rate, load in rows:
        rps = f"{load['rps']:,.1f}" if load["rps"] > 0 else f"0 (none answered in {args.seconds} s)"
        p99 = f"{load['p99']:.1f}" if load["rps"] > 0 else "-"
        print(f"| {name} | {seconds} | {'-' if rate is None else f'{rate:,.0f}'} | {rps} | {p99} | "
              f"{load['non2xx']:.0f} |")
    cached, uncached, ceiling = rows[0][3]["rps"], rows[1][3]["rps"], rows[3][3]["rps"]
    print(f"\nfirst walk {first_walk:.2f} s (target < 1 s); page / ceiling = {cached / ceiling:.2f} cached, "
          f"{uncached / ceiling:.2f} uncached (target >= 0.50)")


if __name__ == "__main__":
    main()
