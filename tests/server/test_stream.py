"""GET /api/v1/stream through real HTTP on one in-process server: access, filters, resume, reset, limits."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from conformance.factories import article, ioc
from stream_support import StreamReader
from support import RunningServer, make_settings, start_server, stop_server

from store.apikeys import hash_key
from store.events import publish_changes
from store.ports import Stores
from store.ports.events import NewEvent
from store.records import Ioc, utcnow


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[RunningServer]:
    settings = make_settings(tmp_path, stream_poll_seconds=0.05, stream_keepalive_seconds=0.3)
    running = await start_server(settings)
    yield running
    await stop_server(running)


async def _store(stores: Stores, n: int, *records: Ioc, **fields: object) -> None:
    """Article ``n`` and ``records`` stored, then their events appended, as collection does."""
    await stores.iocs.upsert_iocs(records)
    stored = article(n, **fields)
    await stores.articles.upsert_articles([stored])
    await publish_changes(stores, [stored], records)


@contextlib.asynccontextmanager
async def opened(
    server: RunningServer, query: str = "", ndjson: bool = False, **headers: str
) -> AsyncIterator[StreamReader]:
    accept = {"Accept": "application/x-ndjson"} if ndjson else {}
    async with (
        server.client(server.pro_key) as client,
        client.stream("GET", "/api/v1/stream" + query, headers={**accept, **headers}) as response,
    ):
        assert response.status_code == 200, await response.aread()
        yield StreamReader(response, ndjson=ndjson)


async def test_a_free_key_is_refused_with_the_upgrade_url(live: RunningServer) -> None:
    async with live.client(live.free_key) as client:
        answer = await client.get("/api/v1/stream")
    assert answer.status_code == 403
    error = answer.json()["error"]
    assert error["code"] == "insufficient_scope" and error["details"]["required_scope"] == "stream"
    assert error["details"]["upgrade_url"]


@pytest.mark.parametrize(
    "query, parameter",
    [
        ("?limit=5", "limit"),
        ("?kinds=article,nope", "kinds"),
        ("?type=nope", "type"),
        ("?severity=high&min_severity=3", None),
        ("?last_event_id=12", "last_event_id"),
        ("?category=nope", "category"),
    ],
)
async def test_a_bad_or_unknown_filter_is_a_400_before_the_stream(
    live: RunningServer, query: str, parameter: str | None
) -> None:
    async with live.client(live.pro_key) as client:
        answer = await client.get("/api/v1/stream" + query)
    assert answer.status_code == 400 and answer.headers["content-type"].startswith("application/json")
    error = answer.json()["error"]
    assert error["request_id"].startswith("req_")
    if parameter == "limit":
        assert error["code"] == "unknown_parameter" and error["details"]["parameters"] == ["limit"]
    elif parameter:
        assert error["details"]["parameter"] == parameter


async def test_new_articles_and_records_arrive_as_events(live: RunningServer) -> None:
    async with opened(live) as stream:
        await _store(live.ctx.stores, 1, ioc("evil.example"), ioc("bad.example"))
        first, *records = await stream.take(3)
    assert first.event == "article" and first.data["id"] == article(1).id and first.data["title"] == "Article 1"
    assert [(r.event, r.data["value"]) for r in records] == [("ioc", "evil.example"), ("ioc", "bad.example")]
    assert records[0].data["source"] == {"feed_name": "Example News", "category": "commercial"}
    ids = [e.id for e in (first, *records)]
    assert all(ids) and ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-"))))  # type: ignore[union-attr]


async def test_resuming_delivers_exactly_what_followed_then_goes_live(live: RunningServer) -> None:
    async with opened(live) as stream:
        await _store(live.ctx.stores, 1)
        seen = (await stream.next()).id
    for n in (2, 3, 4):
        await _store(live.ctx.stores, n)
    for ndjson, earlier in ((False, []), (True, ["Article 10"])):  # the second also misses the first's new one
        async with opened(live, ndjson=ndjson, **{"Last-Event-ID": str(seen)}) as stream:
            missed = await stream.take(3 + len(earlier))
            assert [e.data["title"] for e in missed] == ["Article 2", "Article 3", "Article 4", *earlier]
            await _store(live.ctx.stores, 10 + ndjson)
            assert (await stream.next()).data["title"] == f"Article {10 + ndjson}"
            assert await stream.nothing_within(0.5)  # no duplicate of anything already given
    async with opened(live, f"?last_event_id={missed[1].id}") as stream:
        assert [e.data["title"] for e in await stream.take(3)] == ["Article 4", "Article 10", "Article 11"]


async def test_filters_choose_the_events(live: RunningServer) -> None:
    async with (
        opened(live, "?type=ipv4&confidence=medium") as iocs,
        opened(live, "?category=malware&source=Wire") as articles,
        opened(live, "?kinds=ioc&source=Wire") as wire_records,
    ):
        await _store(live.ctx.stores, 1, ioc("evil.example"), category="vulnerabilities")
        wire = ioc("192.0.2.7", "ipv4", sources=["Wire"], feed_name="Wire")
        await _store(live.ctx.stores, 2, wire, category="malware", source_name="Wire")
        got = await iocs.next()
        assert (got.event, got.data["value"]) == ("ioc", "192.0.2.7") and await iocs.nothing_within(0.3)
        got = await articles.next()
        assert (got.event, got.data["title"]) == ("article", "Article 2") and await articles.nothing_within(0.3)
        got = await wire_records.next()
        assert got.data["value"] == "192.0.2.7" and await wire_records.nothing_within(0.3)


async def test_a_saved_feed_filters_the_records_streamed(live: RunningServer) -> None:
    filters = {"type": ["ipv4"], "threat_actor": ["lazarus"], "severity": ["high", "critical"]}
    async with live.client(live.pro_key) as http, live.client(live.free_key) as other:
        feed = (await http.post("/api/v1/feeds", json={"name": "lazarus ips", "filters": filters})).json()
        theirs = (await other.post("/api/v1/feeds", json={"name": "theirs"})).json()
        refused = [await http.get("/api/v1/stream", params={"feed": f}) for f in (theirs["id"], "nope")]
    assert all(r.status_code == 400 and r.json()["error"]["details"]["parameter"] == "feed" for r in refused)
    async with (
        opened(live, f"?feed={feed['id']}") as fed,
        opened(live, f"?feed={feed['id']}&confidence=high") as narrower,
    ):
        await _store(live.ctx.stores, 1, ioc("192.0.2.1", "ipv4", threat_actors=["lazarus"], severity=2.0))  # low
        await _store(live.ctx.stores, 2, ioc("evil.example", threat_actors=["lazarus"], severity=9.0))  # a domain
        await _store(live.ctx.stores, 3, ioc("192.0.2.2", "ipv4", threat_actors=["apt28"], severity=9.0))
        await _store(live.ctx.stores, 4, ioc("192.0.2.9", "ipv4", threat_actors=["lazarus"], severity=8.0))
        got = await fed.next()  # the feed narrows the kinds to IOC records: no article events
        assert (got.event, got.data["value"], got.data["severity_label"]) == ("ioc", "192.0.2.9", "high")
        assert await fed.nothing_within(0.3) and await narrower.nothing_within(0.1)  # and the stream's own filters


async def test_idle_streams_get_comment_lines(live: RunningServer) -> None:
    for ndjson in (False, True):
        async with opened(live, ndjson=ndjson) as stream:
            assert await stream.nothing_within(1.0)
            assert stream.comments >= 2


async def test_an_id_no_longer_kept_gets_one_reset_then_live_events(live: RunningServer) -> None:
    events = live.ctx.stores.events
    old = (await events.append([NewEvent("article", b'{"title": "old"}')] * 2))[0]
    await asyncio.sleep(0.01)
    await events.trim(utcnow())
    async with opened(live, **{"Last-Event-ID": str(old)}) as stream:
        reset = await stream.next()
        assert reset.event == "reset" and reset.data["last_event_id"] == str(old)
        assert reset.data["modified_since"] < old.at.isoformat()
        await _store(live.ctx.stores, 5)
        assert (await stream.next()).data["title"] == "Article 5"


async def test_a_key_holds_a_bounded_number_of_streams(live: RunningServer) -> None:
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(5):
            await stack.enter_async_context(opened(live))
        async with live.client(live.pro_key) as client:
            refused = await client.get("/api/v1/stream")
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "too_many_streams"
        assert refused.json()["error"]["details"]["limit"] == 5
    await asyncio.sleep(0.2)
    # every slot was given back on close: the log (which every process shares) holds none for the key
    assert await live.ctx.stores.events.acquire_slot(await _owner(live), "probe", 1, 5)


async def _owner(server: RunningServer) -> str:
    found = await server.ctx.accounts.key_with_user(hash_key(server.pro_key))
    assert found is not None
    return found[0].id


async def test_duration_closes_the_stream(live: RunningServer) -> None:
    async with live.client(live.pro_key) as client:
        answer = await client.get("/api/v1/stream?duration=1")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
    assert answer.text.startswith(": stream open")


async def test_a_client_that_stops_reading_is_sent_overflow_and_disconnected(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, stream_poll_seconds=0.05, stream_buffer_events=100)
    server = await start_server(settings)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            headers = {"Authorization": f"Bearer {server.pro_key}"}
            async with client.stream("GET", "/api/v1/stream", headers=headers) as response:
                stream = StreamReader(response)
                await asyncio.sleep(0.3)
                big = b'{"title": "%s"}' % (b"x" * 60_000)
                for _ in range(50):  # 30 MB: more than the sockets hold, so the server's queue fills
                    await server.ctx.stores.events.append([NewEvent("article", big)] * 10)
                await asyncio.sleep(1.0)  # well within the grace the server gives the overflow frame
                got = []
                with contextlib.suppress(EOFError):
                    while True:
                        got.append(await stream.next(15))
        overflow = got[-1]
        assert overflow.event == "overflow" and 1 < len(got) < 500
        assert overflow.data["last_event_id"] == got[-2].id
    finally:
        await stop_server(server)


async def test_warninglisted_records_are_left_out_unless_asked_for(live: RunningServer) -> None:
    listed = ioc("8.8.8.8", "ipv4", warninglists=["List of known IPv4 public DNS resolvers"])
    async with opened(live, "?kinds=ioc") as default, opened(live, "?kinds=ioc&include_warninglisted=true") as every:
        await _store(live.ctx.stores, 1, listed, ioc("evil.example"))
        got = await default.next()
        assert got.data["value"] == "evil.example" and await default.nothing_within(0.3)
        both = await every.take(2)
        shown = [(e.data["value"], e.data["warninglisted"]) for e in both]
        assert shown == [("8.8.8.8", True), ("evil.example", False)]
