"""scripts/bench soak: a bounded soak of the production mode under mixed traffic.

A real redis-server and a ctiwire server with the Redis cache and limiter (two processes by default),
on the demo dataset; ``--connections`` clients on loopback send a mix of the requests users make (article
pages, IOC pages, a search, a lookup, cached exports, stats, TAXII pages) for ``--minutes``, then stop by
themselves. Every ``--interval`` seconds it records the server processes' RSS, requests, errors (5xx and
transport) and p50/p99. Prints the table, the command, and ratio lines.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import benchlib  # noqa: E402
from support import cli_env, ctiwire, spawn_server, start_redis  # noqa: E402

TAXII = "application/taxii+json;version=2.1"
MIX: list[tuple[str, dict[str, str], dict[str, str]]] = [
    ("/api/v1/articles", {"limit": "50"}, {}),
    ("/api/v1/articles", {"category": "malware", "limit": "20"}, {}),
    ("/api/v1/iocs", {"limit": "100"}, {}),
    ("/api/v1/iocs/search", {"q": "bad-host.net"}, {}),
    ("/api/v1/lookup", {"value": "evil.example"}, {}),
    ("/api/v1/iocs/stix", {}, {}),
    ("/api/v1/iocs/misp", {"window": "7d"}, {}),
    ("/api/v1/iocs/stats", {"window": "30d"}, {}),
    ("/api/taxii2/api/collections/all-iocs/objects/", {"limit": "100"}, {"Accept": TAXII}),
]


def rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def server_pids(parent: int) -> list[int]:
    children = [int(p) for p in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()]
    return [parent, *children]


class Window:
    def __init__(self) -> None:
        self.times: list[float] = []
        self.errors = 0

    def row(self) -> tuple[int, int, float, float]:
        ordered = sorted(self.times) or [float("nan")]
        return (len(self.times), self.errors, ordered[len(ordered) // 2] * 1000,
                ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000)


async def client(base: str, key: str, stop: float, window: list[Window], seed: int) -> None:
    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        while time.monotonic() < stop:
            path, params, headers = rng.choice(MIX)
            started = time.monotonic()
            try:
                answer = await http.get(path, params=params, headers=headers)
                failed = answer.status_code >= 500
            except httpx.HTTPError:
                failed = True
            current = window[-1]
            current.times.append(time.monotonic() - started)
            current.errors += failed


async def soak(base: str, key: str, pids: list[int], args: argparse.Namespace) -> list[tuple[float, ...]]:
    stop = time.monotonic() + args.minutes * 60
    windows = [Window()]
    clients = [asyncio.create_task(client(base, key, stop, windows, n)) for n in range(args.connections)]
    rows, started = [], time.monotonic()
    while time.monotonic() < stop:
        await asyncio.sleep(min(args.interval, max(stop - time.monotonic(), 0.1)))
        count, errors, p50, p99 = windows[-1].row()
        rows.append((time.monotonic() - started, rss_mb(pids), count, errors, p50, p99))
        windows.append(Window())
    await asyncio.gather(*clients)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--interval", type=float, default=30.0)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--articles", type=int, default=5000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ctiwire-soak-"))
    redis = start_redis(work / "redis")
    env = cli_env(work, CTIWIRE_REDIS_URL=redis.url, CTIWIRE_RATE_LIMIT_SCALE="100000",
                  CTIWIRE_SEED_ARTICLES=str(args.articles))
    ctiwire(env, "seed")
    key = benchlib.pro_key(env)
    server = spawn_server({**env, "CTIWIRE_PROCESSES": str(args.processes)}, "--no-seed")
    try:
        pids = server_pids(server.process.pid)
        rows = asyncio.run(soak(server.url, key, pids, args))
    finally:
        server.stop()
        redis.stop()
    report(rows, args)


def report(rows: list[tuple[float, ...]], args: argparse.Namespace) -> None:
    print(f"\n`scripts/bench soak --minutes {args.minutes:g} --connections {args.connections} --interval "
          f"{args.interval:g} --processes {args.processes}` ({os.cpu_count()} cores, Redis mode)\n")
    print("| elapsed s | server RSS MB | requests | errors | p50 ms | p99 ms |\n|---:|---:|---:|---:|---:|---:|")
    for elapsed, rss, count, errors, p50, p99 in rows:
        print(f"| {elapsed:.0f} | {rss:.1f} | {count:,.0f} | {errors:.0f} | {p50:.1f} | {p99:.1f} |")
    total = sum(r[2] for r in rows)
    errors = sum(r[3] for r in rows)
    growth = rows[-1][1] - rows[0][1]
    second_half = [r[5] for r in rows[len(rows) // 2:]]
    first_half = [r[5] for r in rows[: max(len(rows) // 2, 1)]]
    print(f"\n{total:,.0f} requests, {errors:.0f} errors; RSS {rows[0][1]:.1f} -> {rows[-1][1]:.1f} MB "
          f"(growth {growth:+.1f} MB after the first interval)")
    print(f"ratio soak_success = {1 - errors / max(total, 1):.4f} (target >= 1.0)")
    print(f"ratio soak_p99_steady = {max(first_half) / max(max(second_half), 1e-9):.2f} (target >= 0.5)")
    print(f"ratio soak_rss_flat = {rows[0][1] / max(rows[-1][1], 1e-9):.2f} (target >= 0.8)")


if __name__ == "__main__":
    main()
