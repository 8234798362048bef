"""The live feed across real processes: two ``ctiwire serve`` processes stream what ``ctiwire ingest`` (a third
process) collects, on the embedded SQLite log and on Redis Streams; resume, NDJSON, filters, overflow
with flat memory, and a Redis restart under an open stream."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from stream_support import StreamEvent, StreamReader
from support import RedisServer, ServerProcess, cli_env, ctiwire, spawn_server, start_redis

from store.ports.events import NewEvent
from store.sqlite import SqliteEventLog

pytestmark = pytest.mark.slow  # server and CLI processes


@dataclass
class Cluster:
    env: dict[str, str]
    servers: list[ServerProcess]
    key: str
    data: Path

    def ingest(self, path: Path) -> None:
        ctiwire(self.env, "ingest", "--file", str(path), "--source-name", "Wire", timeout=600)


@pytest.fixture(scope="module", autouse=True)
def _trained_model(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The ATT&CK classifier trained (once per run, minutes on a busy machine) before any stream waits on it."""
    text = tmp_path_factory.mktemp("model") / "warm.txt"
    text.write_text("Loader wave\nThe loader beaconed to 45.61.136.9 after phishing.\n")
    ctiwire(cli_env(text.parent), "enrich", str(text), timeout=900)


def _feed(path: Path, numbers: list[int]) -> Path:
    """A feed whose item ``n`` reports the address 45.61.136.n and the domain invoice-syncn.top."""
    items = "".join(
        f"<item><title>Loader wave {n} hits logistics firms</title><link>https://news.example/wave-{n}</link>"
        f"<description>The loader of wave {n} beaconed to 45.61.136.{n} and hxxps://invoice-sync{n}[.]top/gate.php "
        f"after phishing invoices reached staff.</description></item>"
        for n in numbers
    )
    path.write_text(
        f"<rss version='2.0'><channel><title>Wire</title><link>https://news.example/</link>"
        f"<description>d</description>{items}</channel></rss>"
    )
    return path


def _cluster(data: Path, processes: int, **extra: str) -> Iterator[Cluster]:
    env = cli_env(data, CTIWIRE_STREAM_POLL_SECONDS="0.1", CTIWIRE_STREAM_KEEPALIVE_SECONDS="1", **extra)
    ctiwire(env, "users", "create", "soc@test.local", "--tier", "pro")
    key = ctiwire(env, "keys", "create", "soc@test.local", "--name", "siem").strip().splitlines()[-1]
    servers: list[ServerProcess] = []
    try:
        servers += [spawn_server(env, "--no-seed") for _ in range(processes)]
        yield Cluster(env, servers, key, data)
    finally:
        for server in servers:
            server.stop()


@pytest.fixture(params=["sqlite", "redis"])
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    extra = {"CTIWIRE_REDIS_URL": request.getfixturevalue("redis_server").url} if request.param == "redis" else {}
    yield from _cluster(tmp_path / "data", 2, **extra)


@contextlib.asynccontextmanager
async def stream(
    server: ServerProcess, key: str, query: str = "", ndjson: bool = False, last: str | None = None
) -> AsyncIterator[StreamReader]:
    headers = {
        "Authorization": f"Bearer {key}",
        **({"Accept": "application/x-ndjson"} if ndjson else {}),
        **({"Last-Event-ID": last} if last else {}),
    }
    async with (
        httpx.AsyncClient(base_url=server.url, timeout=httpx.Timeout(30, read=None)) as client,
        client.stream("GET", "/api/v1/stream" + query, headers=headers) as response,
    ):
        assert response.status_code == 200, await response.aread()
        yield StreamReader(response, ndjson=ndjson)


def _titles(events: list[StreamEvent]) -> list[str]:
    return [e.data["title"] for e in events if e.event == "article"]


async def _until_quiet(reader: StreamReader, seconds: float = 2.0) -> list[StreamEvent]:
    """Every event that arrives until none has for ``seconds``."""
    got = []
    with contextlib.suppress(TimeoutError):
        while True:
            got.append(await reader.next(seconds))
    return got


async def test_collected_articles_reach_both_processes_and_resume_exactly(cluster: Cluster, tmp_path: Path) -> None:
    first, second = cluster.servers
    async with (
        stream(first, cluster.key) as one,
        stream(second, cluster.key) as two,
        stream(second, cluster.key, "?kinds=ioc&type=ipv4", ndjson=True) as addresses,
    ):
        await asyncio.to_thread(cluster.ingest, _feed(tmp_path / "one.xml", [1]))
        seen = [await one.take(4, timeout=60), await two.take(4, timeout=60)]
        for events in seen:
            assert _titles(events) == ["Loader wave 1 hits logistics firms"]
            assert {e.data["value"] for e in events if e.event == "ioc"} == {
                "45.61.136.1",
                "invoice-sync1.top",
                "https://invoice-sync1.top/gate.php",
            }
        assert [e.id for e in seen[0]] == [e.id for e in seen[1]]  # one order for every client
        only = await addresses.next(30)
        assert (only.event, only.data["value"]) == ("ioc", "45.61.136.1") and await addresses.nothing_within(1)
    last = seen[0][-1].id
    await asyncio.to_thread(cluster.ingest, _feed(tmp_path / "three.xml", [2, 3, 4]))
    expected = [f"Loader wave {n} hits logistics firms" for n in (2, 3, 4)]
    for server, ndjson in ((second, False), (first, True)):
        async with stream(server, cluster.key, "?kinds=article", ndjson=ndjson, last=last) as resumed:
            assert sorted(_titles(await _until_quiet(resumed))) == sorted(expected)  # those three, once each


async def test_a_reader_that_stops_is_cut_off_with_flat_memory(tmp_path: Path) -> None:
    for found in _cluster(tmp_path / "data", 1, CTIWIRE_STREAM_BUFFER_EVENTS="100"):
        server = found.servers[0]
        sock = _stalled_stream(server, found.key)
        before = _rss(server)
        log = SqliteEventLog.in_file(found.data / "ctiwire.sqlite3")  # this process produces, as ingest would
        await log.open()
        article = b'{"title": "%s"}' % (b"x" * 10_000)  # an article's list form is a few KB
        for _ in range(60):  # 60 MB through a connection that takes nothing
            await log.append([NewEvent("article", article)] * 100)
        await log.close()
        await asyncio.sleep(2)
        grown = _rss(server) - before
        received = _drain(sock)
        assert grown < 30 * 1024 * 1024, f"the server grew by {grown:,} bytes"
        assert b"event: overflow" in received and received.count(b"event: article") < 6000
        overflow = json.loads(received.rsplit(b"event: overflow\ndata: ", 1)[1].split(b"\n", 1)[0])
        ids = [line.removeprefix(b"id: ").decode() for line in received.splitlines() if line.startswith(b"id: ")]
        # The last id written, or (cut off before the first frame, as under load) the log's start: either way
        # a reconnection with it misses nothing.
        assert overflow["last_event_id"] == (ids[-1] if ids else "0-0")


def _stalled_stream(server: ServerProcess, key: str) -> socket.socket:
    """A stream whose client never reads (a small receive buffer, so the server's side fills)."""
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(f"GET /api/v1/stream HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n\r\n".encode())
    time.sleep(0.5)
    return sock


def _drain(sock: socket.socket) -> bytes:
    sock.settimeout(20)
    parts = []
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while chunk := sock.recv(1 << 20):
            parts.append(chunk)
    sock.close()
    return b"".join(parts)


def _rss(server: ServerProcess) -> int:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def test_a_redis_restart_under_an_open_stream_loses_nothing(tmp_path: Path) -> None:
    redis = start_redis(tmp_path / "redis")
    try:
        for found in _cluster(tmp_path / "data", 1, CTIWIRE_REDIS_URL=redis.url):
            async with stream(found.servers[0], found.key, "?kinds=article") as reader:
                await asyncio.to_thread(found.ingest, _feed(tmp_path / "before.xml", [1]))
                assert _titles([await reader.next(60)]) == ["Loader wave 1 hits logistics firms"]
                redis = _restart(redis)
                await asyncio.to_thread(found.ingest, _feed(tmp_path / "after.xml", [2, 3]))
                after = await reader.take(2, timeout=60)
                assert sorted(_titles(after)) == [
                    "Loader wave 2 hits logistics firms",
                    "Loader wave 3 hits logistics firms",
                ]
    finally:
        redis.stop()


def _restart(redis: RedisServer) -> RedisServer:
    redis.stop()
    time.sleep(1)
    return start_redis(redis.dir, redis.port)


async def test_the_cli_tails_the_stream_from_an_id(tmp_path: Path) -> None:
    for found in _cluster(tmp_path / "data", 1):
        server = found.servers[0]
        async with stream(server, found.key, "?kinds=article") as reader:
            await asyncio.to_thread(found.ingest, _feed(tmp_path / "one.xml", [1]))
            last = (await reader.next(60)).id
        await asyncio.to_thread(found.ingest, _feed(tmp_path / "two.xml", [2, 3]))
        printed = await asyncio.to_thread(
            ctiwire,
            found.env,
            "stream",
            "--url",
            server.url,
            "--key",
            found.key,
            "--filter",
            "kinds=article",
            "--last-event-id",
            str(last),
            "--count",
            "2",
        )
        lines = [json.loads(line) for line in printed.splitlines()]
        assert sorted(line["data"]["title"] for line in lines) == [
            "Loader wave 2 hits logistics firms",
            "Loader wave 3 hits logistics firms",
        ]
        assert all(line["event"] == "article" and line["id"] > str(last) for line in lines)
