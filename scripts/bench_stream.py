"""scripts/bench stream: the live feed's fan-out, end-to-end delay and memory per idle stream.

1. Fan-out: ``--streams`` SSE streams open on one ``ctiwire serve`` process (embedded SQLite log); ``--events``
   article-sized events appended to its log by this process (as ``ctiwire ingest`` would); the time until
   every stream has every event. The ceiling: a bare Tornado handler writing the same frames to as many
   connections (one write and flush per batch of 100, as the hub reads them).
   ``ratio stream_fanout = <events/s delivered by ctiwire> / <events/s written by the bare handler>``.
2. Delay from an event's append (the call, so its own round trip counts) to its arrival at a client, p50
   and p99, with the embedded log (polled every CTIWIRE_STREAM_POLL_SECONDS, default 0.5 s) and with Redis
   Streams (a blocking XREAD).
3. Memory per idle open stream: the server's RSS before and after opening the streams.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support import VENV_BIN, cli_env, delivered_key, free_port, spawn_server, start_redis  # noqa: E402

from store import accounts  # noqa: E402
from store.ports.events import EventLog, NewEvent  # noqa: E402
from store.redis_events import RedisEventLog  # noqa: E402
from store.sqlite import SqliteEventLog, sqlite_stores  # noqa: E402

ARTICLE = b'{"id": "%d", "title": "%s", "summary": "%s"}'
BATCH = 100
# The ceiling: every connection to GET /s is held; GET /go?n=N writes N frames of the given size to each,
# a batch of 100 frames per write and flush.
BARE_SERVER = r"""
import sys, asyncio, tornado.web, tornado.ioloop
open_streams = []
class S(tornado.web.RequestHandler):
    async def get(self):
        self.set_header("Content-Type", "text/event-stream")
        self.write(b": open\n\n"); await self.flush()
        self.done = asyncio.Event(); open_streams.append(self)
        await self.done.wait()
class Go(tornado.web.RequestHandler):
    async def get(self):
        n, size = int(self.get_argument("n")), int(self.get_argument("size"))
        frames = [b"id: 1-%d\nevent: article\ndata: %s\n\n" % (i, b"x" * size) for i in range(n)]
        async def one(h):
            for start in range(0, n, 100):
                h.write(b"".join(frames[start:start + 100])); await h.flush()
        await asyncio.gather(*(one(h) for h in open_streams))
        self.finish("ok")
async def main():
    tornado.web.Application([(r"/s", S), (r"/go", Go)]).listen(int(sys.argv[1]), "127.0.0.1")
    await asyncio.Event().wait()
asyncio.run(main())
"""


class Client:
    """One raw stream connection that counts the events it receives and when each arrived."""

    def __init__(self) -> None:
        self.count, self.arrivals, self.buffer = 0, [], b""

    async def open(self, port: int, path: str, key: str | None) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        auth = f"Authorization: Bearer {key}\r\n" if key else ""
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n".encode())
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += await self.reader.read(65536)
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        marker = b"\nevent: "
        while chunk := await self.reader.read(1 << 20):
            now = time.time()
            found = (self.buffer[-len(marker) + 1 :] + chunk).count(marker)  # a marker split across two reads
            self.buffer = chunk
            self.count += found
            self.arrivals += [(now, chunk)] if found and len(self.arrivals) < 100_000 else []

    def close(self) -> None:
        self.task.cancel()
        self.writer.close()


async def _open(n: int, port: int, path: str, keys: list[str | None]) -> list[Client]:
    clients = [Client() for _ in range(n)]
    for start in range(0, n, 100):
        await asyncio.gather(
            *(c.open(port, path, keys[i % len(keys)]) for i, c in enumerate(clients[start : start + 100], start))
        )
    return clients


async def _all_received(clients: list[Client], events: int, timeout: float = 240) -> float:
    deadline = time.monotonic() + timeout
    while any(c.count < events for c in clients):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out: {sum(c.count for c in clients)} of {events * len(clients)} events arrived")
        await asyncio.sleep(0.01)
    return time.monotonic()


def _payloads(events: int, size: int) -> list[NewEvent]:
    return [NewEvent("article", ARTICLE % (i, b"t" * 60, b"s" * size)) for i in range(events)]


async def _keys(data: Path, streams: int) -> list[str | None]:
    """Enough Pro keys for ``streams`` streams, five each (the tier's bound), made in the store directly."""
    stores = sqlite_stores(data / "ctiwire.sqlite3")
    await stores.open()
    keys: list[str | None] = []
    for user in range(streams // 250 + 1):
        email = f"bench{user}@ctiwire.local"
        await accounts.create_user(stores.accounts, email, "pro")
        for n in range(min(50, (streams - len(keys) * 5 + 4) // 5)):
            keys.append((await delivered_key(stores.accounts, email, f"k{n}")).secret)
    await stores.close()
    return keys


def _rss(pid: int) -> int:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


async def fanout(data: Path, streams: int, events: int, size: int) -> tuple[float, float, float]:
    """(ctiwire events/s, bare events/s, RSS bytes per idle stream)."""
    keys = await _keys(data, streams)
    server = spawn_server(
        cli_env(data, CTIWIRE_STREAM_POLL_SECONDS="0.05", CTIWIRE_RATE_LIMIT_SCALE="1000"), "--no-seed"
    )
    port = int(server.url.rsplit(":", 1)[1])
    try:
        (starter,) = await _open(1, port, "/api/v1/stream", keys[-1:])  # the hub started
        starter.close()
        before = _rss(server.process.pid)
        clients = await _open(streams, port, "/api/v1/stream", keys)
        await asyncio.sleep(2)
        per_stream = (_rss(server.process.pid) - before) / streams
        log = SqliteEventLog.in_file(data / "ctiwire.sqlite3")
        await log.open()
        start = time.monotonic()
        payloads = _payloads(events, size)
        for at in range(0, events, BATCH):
            await log.append(payloads[at : at + BATCH])
        rate = streams * events / (await _all_received(clients, events) - start)
        await log.close()
        for c in clients:
            c.close()
    finally:
        server.stop()
    return rate, await _bare(streams, events, size), per_stream


async def _bare(streams: int, events: int, size: int) -> float:
    port = free_port()
    bare = subprocess.Popen([str(VENV_BIN / "python"), "-c", BARE_SERVER, str(port)])
    try:
        await asyncio.sleep(1.5)
        clients = await _open(streams, port, "/s", [None])
        frame = len(ARTICLE % (0, b"t" * 60, b"s" * size))
        start = time.monotonic()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET /go?n={events}&size={frame} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        rate = streams * events / (await _all_received(clients, events) - start)
        writer.close()
        for c in clients:
            c.close()
    finally:
        bare.terminate()
        bare.wait(10)
    return rate


async def delay(data: Path, mode: str, samples: int) -> tuple[float, float]:
    """p50 and p99 in ms from an append's commit to its arrival at one of 10 streams."""
    redis = start_redis(data / "redis") if mode == "redis" else None
    extra = {"CTIWIRE_REDIS_URL": redis.url} if redis else {}
    keys = await _keys(data, 10)
    server = spawn_server(cli_env(data, **extra), "--no-seed")
    log: EventLog = RedisEventLog(redis.url) if redis else SqliteEventLog.in_file(data / "ctiwire.sqlite3")
    try:
        clients = await _open(10, int(server.url.rsplit(":", 1)[1]), "/api/v1/stream", keys)
        await log.open()
        delays = []
        for n in range(samples):
            committed = time.time()  # the append call: its own round trip is part of the delay measured
            await log.append([NewEvent("article", b'{"n": %d}' % n)])
            while any(c.count <= n for c in clients):
                await asyncio.sleep(0.0005)
            delays += [c.arrivals[-1][0] - committed for c in clients]
            await asyncio.sleep(random.uniform(0.05, 0.55))  # appends at any point of the poll interval
        for c in clients:
            c.close()
    finally:
        await log.close()
        server.stop()
        if redis:
            redis.stop()
    cuts = statistics.quantiles([max(d, 0) * 1000 for d in delays], n=100)
    return cuts[49], cuts[98]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--size", type=int, default=3000, help="bytes of each event's data (an article ~3 KB)")
    parser.add_argument("--samples", type=int, default=100, help="events timed for the delay")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ours, bare, per_stream = await fanout(Path(tmp, "fanout"), args.streams, args.events, args.size)
        embedded = await delay(Path(tmp, "embedded"), "embedded", args.samples)
        redis = await delay(Path(tmp, "redis"), "redis", args.samples)
    print(f"| measure ({args.streams} streams, {args.events} events of {args.size} B) | value |\n|---|---|")
    print(f"| ctiwire fan-out, events delivered/s | {ours:,.0f} |\n| bare Tornado, events written/s | {bare:,.0f} |")
    print(f"| delay embedded p50 / p99 (ms) | {embedded[0]:.1f} / {embedded[1]:.1f} |")
    print(f"| delay Redis p50 / p99 (ms) | {redis[0]:.1f} / {redis[1]:.1f} |")
    print(f"| memory per idle stream (KiB) | {per_stream / 1024:.1f} |")
    print(f"\nratio stream_fanout = {ours / bare:.2f} (target >= 0.5)")
    print(f"command: scripts/bench stream --streams {args.streams} --events {args.events} --size {args.size}")


if __name__ == "__main__":
    asyncio.run(main())
