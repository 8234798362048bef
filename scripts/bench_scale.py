"""scripts/bench scale: the IOC side at two data sizes, so what grows with the data shows as a ratio.

A small and a large demo dataset (default 5,000 and 200,000 articles, the demo generator of ``ctiwire seed``
spread over 400 days) are seeded in-process, timed (articles/s), and kept under bench/scale-<n>/ for the
next run (delete the folder to reseed). A server is started on each file and both are measured from outside,
one request at a time, the two servers taking turns (so load from other processes falls on both alike),
p50 over --requests after a warm-up, each request a cache miss (a parameter varies per request):
  - ``/api/v1/iocs?type=domain&limit=100`` (``since`` moved by a second per request);
  - ``/api/v1/iocs/search`` for a stored domain, which the search matches as a substring of every value
    (a different domain per request);
  - the STIX export with ``limit=100`` (its body size);
  - the server's RSS after that mix.
Then, in-process on the same file: 100 new articles are stored and the Pro stats of every window rebuilt
(the refresh a write triggers), p50 over --refreshes.
Prints the table in BENCHMARKS.md form and the ratio lines (small / large; seeding large / small) last.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sqlite3
import statistics
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import benchlib  # noqa: E402
from bench_articles import rss_kb  # noqa: E402
from support import cli_env, spawn_server  # noqa: E402

from exporters.ioc_stats import precompute_every_stats  # noqa: E402
from ingest.aggregate import aggregate  # noqa: E402
from ingest.demo import demo_sources, generate, seed_store  # noqa: E402
from store.cache import MemoryCache  # noqa: E402
from store.records import iso, utcnow  # noqa: E402
from store.sqlite import sqlite_stores  # noqa: E402

BENCH_DIR = ROOT / "bench"
# (ratio name, measure, target, small/large (True) or large/small (False))
RATIOS = (
    ("scale_iocs_page", "iocs_page_ms", 0.5, True),
    ("scale_ioc_search", "search_ms", 0.5, True),
    ("scale_stats_refresh", "refresh_ms", 0.5, True),
    ("scale_export_bytes", "export_bytes", 0.8, True),
    ("scale_rss", "rss_mb", 0.67, True),
    ("scale_seed", "seed_rate", 0.8, False),
)


def seeded(articles: int) -> tuple[Path, float]:
    """The data folder of ``articles`` demo articles, seeded now or by an earlier run, and its seeding rate."""
    folder = BENCH_DIR / f"scale-{articles}"
    rate_file = folder / "seed-rate"
    if rate_file.exists():
        return folder, float(rate_file.read_text())
    folder.mkdir(parents=True, exist_ok=True)

    async def seed() -> float:
        stores = sqlite_stores(folder / "ctiwire.sqlite3")
        await stores.open()
        try:
            start = time.perf_counter()
            await seed_store(stores, articles)
            return articles / (time.perf_counter() - start)
        finally:
            await stores.close()

    rate = asyncio.run(seed())
    benchlib.pro_key(cli_env(folder))  # the key file is made once with the data
    rate_file.write_text(f"{rate}")
    return folder, rate


def bench_key(folder: Path) -> str:
    """A new key of the bench's Pro user (a key's secret is shown only once)."""
    from support import ctiwire

    name = f"bench-{uuid.uuid4().hex[:8]}"
    return ctiwire(cli_env(folder), "keys", "create", "bench@ctiwire.local", "--name", name).strip().splitlines()[-1]


def domains(folder: Path, n: int) -> list[str]:
    with sqlite3.connect(folder / "ctiwire.sqlite3") as db:
        return [r[0] for r in db.execute("SELECT value FROM iocs WHERE type = 'domain' ORDER BY value LIMIT ?", (n,))]


def p50s(clients: list[httpx.Client], path: str, params: list[list[dict[str, str]]], warm: int
         ) -> list[tuple[float, int]]:
    """Per server, p50 (ms) of one request per parameter set (the first ``warm`` untimed) and the last body's
    size. The servers take turns request by request, so a burst of load from other processes on the shared
    machine falls on both alike instead of on whichever was being measured then."""
    times: list[list[float]] = [[] for _ in clients]
    sizes = [0] * len(clients)
    for i in range(len(params[0])):
        for k, client in enumerate(clients):
            start = time.perf_counter()
            response = client.get(path, params=params[k][i])
            elapsed = (time.perf_counter() - start) * 1000
            response.raise_for_status()
            sizes[k] = len(response.content)
            if i >= warm:
                times[k].append(elapsed)
    return [(statistics.median(t), n) for t, n in zip(times, sizes, strict=True)]


def _pages(warm: int, requests: int) -> list[dict[str, str]]:
    base = utcnow() - timedelta(days=360)
    return [{"type": "domain", "limit": "100", "since": iso(base + timedelta(seconds=i))}
            for i in range(warm + requests)]


def over_http(folders: list[Path], requests: int, warm: int) -> list[dict[str, float]]:
    """The HTTP measures of each folder's server, all servers running and answering in turn."""
    servers = []
    try:
        for folder in folders:
            key = bench_key(folder)
            servers.append((spawn_server(cli_env(folder, CTIWIRE_RATE_LIMIT_SCALE="100000"), "--no-seed"), key))
            benchlib.settle(servers[-1][0].process.pid, timeout=600)
        clients = [httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=600)
                   for server, key in servers]
        outs: list[dict[str, float]] = [{} for _ in folders]
        pages = p50s(clients, "/api/v1/iocs", [_pages(warm, requests)] * len(folders), warm)
        # A stored domain per request: a substring of itself and of its URLs.
        needles = [[{"q": d} for d in domains(folder, warm + requests)] for folder in folders]
        searches = p50s(clients, "/api/v1/iocs/search", needles, warm)
        exports = p50s(clients, "/api/v1/iocs/stix", [[{"limit": "100"}] * 2] * len(folders), 1)
        for out, page, search, export, (server, _) in zip(outs, pages, searches, exports, servers, strict=True):
            out.update(iocs_page_ms=page[0], search_ms=search[0], export_bytes=export[1],
                       rss_mb=rss_kb(server.process.pid) / 1024)
        for client in clients:
            client.close()
        return outs
    finally:
        for server, _ in servers:
            server.stop()


async def refresh(folder: Path, repeats: int) -> float:
    """p50 (ms) of rebuilding every Pro stats window after storing 100 new articles."""
    stores = sqlite_stores(folder / "ctiwire.sqlite3")
    await stores.open()
    categories = {s.name: s.category for s in demo_sources()}
    times = []
    try:
        for round_ in range(repeats):
            now = utcnow()
            fresh = next(generate(100, now, seed=1000 + round_))
            batch = [
                dataclasses.replace(a, id=str(uuid.uuid4()), url=f"{a.url}/r{round_}", content_hash=uuid.uuid4().hex)
                for a in fresh
            ]
            await stores.articles.upsert_articles(batch)
            await stores.iocs.upsert_iocs(aggregate(batch, categories))
            start = time.perf_counter()
            await precompute_every_stats(stores.iocs, MemoryCache(), now, 3600)
            times.append((time.perf_counter() - start) * 1000)
    finally:
        await stores.close()
    return statistics.median(times)


def measure(args: argparse.Namespace) -> list[dict[str, float]]:
    """Every measure of the small and the large dataset (seeded first when not kept)."""
    seeds = [seeded(args.small), seeded(args.large)]
    outs = over_http([folder for folder, _ in seeds], args.requests, args.warm)
    for out, (folder, rate) in zip(outs, seeds, strict=True):
        out["seed_rate"] = rate
        out["refresh_ms"] = asyncio.run(refresh(folder, args.refreshes))
    return outs


ROWS = (
    ("seeding, articles/s", "seed_rate", "{:,.0f}"),
    ("`/iocs?type=domain&limit=100`, cache miss, p50 ms", "iocs_page_ms", "{:.1f}"),
    ("`/iocs/search` for a domain substring, cache miss, p50 ms", "search_ms", "{:.1f}"),
    ("stats refresh after 100 new articles (every Pro window), p50 ms", "refresh_ms", "{:.1f}"),
    ("STIX export `limit=100`, body KB", "export_bytes", "{:,.0f}"),
    ("server RSS after the mix, MB", "rss_mb", "{:.0f}"),
)


def report(small: dict[str, float], large: dict[str, float], args: argparse.Namespace) -> None:
    print(
        f"\n`scripts/bench scale --small {args.small} --large {args.large} --requests {args.requests}` "
        f"({os.cpu_count()} cores)\n"
    )
    print(f"| measure | {args.small:,} articles | {args.large:,} articles |\n|---|---:|---:|")
    for label, key, form in ROWS:
        scale = 1024 if key == "export_bytes" else 1
        print(f"| {label} | {form.format(small[key] / scale)} | {form.format(large[key] / scale)} |")
    print()
    for name, key, target, small_over_large in RATIOS:
        value = small[key] / large[key] if small_over_large else large[key] / small[key]
        print(f"ratio {name} = {value:.2f} (target >= {target})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=5_000)
    parser.add_argument("--large", type=int, default=200_000)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--refreshes", type=int, default=5)
    args = parser.parse_args()
    small, large = measure(args)
    report(small, large, args)


if __name__ == "__main__":
    main()
