"""Requests for the same small IOC page in the same second share one read (server.iocs._small_page): at each
second's turn the lookback floor moves, and every request of that second used to count and read the page itself."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from conformance.factories import ioc
from support import RunningServer

from server import iocs as server_iocs
from store.records import utcnow


async def test_concurrent_requests_for_one_page_share_one_read(server: RunningServer,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    now = utcnow().replace(microsecond=0)
    seen = now - timedelta(hours=1)
    await server.ctx.iocs.upsert_iocs(
        [ioc(f"c2-{n}.bad-example.net", first_seen=seen, last_seen=seen, modified=seen) for n in range(30)])
    monkeypatch.setattr(server_iocs, "utcnow", lambda: now + timedelta(milliseconds=300))  # one second for all
    reads: list[Any] = []
    original = server.ctx.iocs.iter_ioc_rows

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(server.ctx.iocs, "iter_ioc_rows", counted)
    async with server.client(server.pro_key) as http:
        answers = await asyncio.gather(*(http.get("/api/v1/iocs", params={"limit": 20}) for _ in range(12)))
    assert [a.status_code for a in answers] == [200] * 12
    assert len({a.content for a in answers}) == 1 and len({a.headers["ETag"] for a in answers}) == 1
    assert len(answers[0].json()["data"]) == 20 and "X-Next-Cursor" in answers[0].headers
    assert len(reads) == 1, f"{len(reads)} reads for one page"
