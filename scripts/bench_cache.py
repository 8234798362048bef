"""scripts/bench cache: cached exports and stats under load, beside the uncached build and the ceiling.

In one run, with 50,000 IOCs in the embedded SQLite store and a real redis-server:
  1. ctiwire with the Redis cache: wrk on a cached STIX export and on cached stats (auth + rate limits on);
  2. ctiwire with the cache disabled: the same export request (every request builds);
  3. the ceiling: a bare Tornado handler returning the same bytes from the same Redis key;
  4. the stats request on an embedded-mode server (no Redis), for the cost of the two Redis round trips.
Prints a markdown table and the command. Needs `wrk` (Debian package) and `redis-server`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import benchlib  # noqa: E402
from support import cli_env, spawn_server, start_redis  # noqa: E402

# The ceiling: GET / answers the export entry's body, GET /stats the stats entry's, read from Redis on
# every request (argv: port, Redis URL, export key, stats key).
BARE_SERVER = r'''
import sys, redis.asyncio as r, tornado.web, tornado.ioloop, asyncio
client = r.from_url(sys.argv[2])
class H(tornado.web.RequestHandler):
    def initialize(self, key, media):
        self.key, self.media = key, media
    async def get(self):
        raw = await client.get(self.key)
        self.set_header("Content-Type", self.media)
        self.finish(raw.partition(b"\n")[2])
async def main():
    tornado.web.Application([(r"/", H, {"key": sys.argv[3], "media": "application/stix+json;version=2.1"}),
                             (r"/stats", H, {"key": sys.argv[4], "media": "application/json"})]
                            ).listen(int(sys.argv[1]), "127.0.0.1")
    await asyncio.Event().wait()
asyncio.run(main())
'''


async def seed(data_dir: Path, n: int) -> None:
    await benchlib.seed_iocs(data_dir, benchlib.synthetic_iocs(n, lambda i: i % 10000, technique_every=4))


def wrk(url: str, key: str | None, seconds: int, connections: int) -> dict[str, float]:
    return benchlib.wrk(url, [f"Authorization: Bearer {key}"] if key else [], seconds, connections)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iocs", type=int, default=50_000)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--processes", type=int, default=1,
                        help="server processes of the cached ctiwire (CTIWIRE_PROCESSES); the ceiling stays one")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk")
    work = Path(tempfile.mkdtemp(prefix="ctiwire-bench-cache-"))
    redis = start_redis(work / "redis")
    procs = []
    try:
        asyncio.run(seed(work, args.iocs))
        env = cli_env(work, CTIWIRE_REDIS_URL=redis.url, CTIWIRE_LOG_LEVEL="WARNING", CTIWIRE_RATE_LIMIT_SCALE="100000")
        key = benchlib.pro_key(env)
        cached = spawn_server({**env, "CTIWIRE_PROCESSES": str(args.processes)}, "--no-seed")
        procs.append(cached.process)
        uncached = spawn_server({**env, "CTIWIRE_CACHE_ENABLED": "false"}, "--no-seed")
        procs.append(uncached.process)
        # The embedded mode (no Redis: in-process cache and limiter), once its own precompute has finished.
        embedded = spawn_server({k: v for k, v in env.items() if k != "CTIWIRE_REDIS_URL"}, "--no-seed")
        procs.append(embedded.process)
        benchlib.settle(embedded.process.pid)
        export_path = "/api/v1/iocs/stix?window=365d&limit=10000"
        first = httpx.get(cached.url + export_path, headers={"X-API-Key": key}, timeout=120)
        first.raise_for_status()
        httpx.get(cached.url + "/api/v1/iocs/stats", headers={"X-API-Key": key}, timeout=120).raise_for_status()
        port = int(cached.url.rsplit(":", 1)[1]) + 1
        entry_keys = [_entry_key(redis.url, p) for p in ("ctiwire:export:stix:*", "ctiwire:stats:pro:7d:*")]
        bare = subprocess.Popen([sys.executable, "-c", BARE_SERVER, str(port), redis.url, *entry_keys])
        procs.append(bare)
        time.sleep(1.0)
        rows = [
            ("cached STIX export (10,000 indicators)", wrk(cached.url + export_path, key, args.seconds,
                                                           args.connections)),
            ("ceiling: bare Tornado + same Redis bytes", wrk(f"http://127.0.0.1:{port}/", None, args.seconds,
                                                             args.connections)),
            ("uncached STIX export (cache disabled)", wrk(uncached.url + export_path, key, args.seconds, 4)),
            ("cached stats", wrk(cached.url + "/api/v1/iocs/stats", key, args.seconds, args.connections)),
            ("ceiling: bare Tornado + same Redis stats bytes", wrk(f"http://127.0.0.1:{port}/stats", None,
                                                                  args.seconds, args.connections)),
            ("cached stats, embedded mode (in-process cache and limiter, no Redis)",
             wrk(embedded.url + "/api/v1/iocs/stats", key, args.seconds, args.connections)),
        ]
        print_table(rows, args, len(first.content))
    finally:
        for proc in procs:
            proc.terminate()
        redis.stop()
        shutil.rmtree(work, ignore_errors=True)


def _entry_key(redis_url: str, pattern: str) -> str:
    import redis as redis_lib

    keys = redis_lib.Redis.from_url(redis_url).keys(pattern)
    return next(k.decode() for k in keys if b":tmp:" not in k and not k.startswith(b"lock:"))


def print_table(rows: list[tuple[str, dict[str, float]]], args: argparse.Namespace, size: int) -> None:
    print(f"\n`scripts/bench cache --iocs {args.iocs} --seconds {args.seconds} --connections {args.connections}"
          f" --processes {args.processes}` ({os.cpu_count()} cores; STIX export body {size / 1e6:.1f} MB)\n")
    print("| request | requests/s | p50 ms | p99 ms | non-2xx |")
    print("|---|---:|---:|---:|---:|")
    for name, r in rows:
        print(f"| {name} | {r['rps']:.1f} | {r['p50']:.2f} | {r['p99']:.2f} | {r['non2xx']:.0f} |")
    cached, ceiling, uncached = rows[0][1]["rps"], rows[1][1]["rps"], rows[2][1]["rps"]
    print(f"\ncached / ceiling = {cached / ceiling:.2f} (target >= 0.60); "
          f"cached / uncached = {cached / max(uncached, 1e-9):.1f}x (target >= 50x); "
          f"cached stats p99 = {rows[3][1]['p99']:.2f} ms (target < 20 ms; the bare handler's: "
          f"{rows[4][1]['p99']:.2f} ms; embedded mode: {rows[5][1]['p99']:.2f} ms)")
    print(f"ratio export_cached = {cached / ceiling:.2f} (target >= 0.6)")
    print(f"ratio stats_redis = {rows[3][1]['rps'] / rows[4][1]['rps']:.2f} (target >= 0.70)")


if __name__ == "__main__":
    main()
