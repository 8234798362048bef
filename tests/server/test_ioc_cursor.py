"""Keyset paging of GET /api/v1/iocs through real HTTP on every backend: following ``X-Next-Cursor`` returns
every record once, in the list's order (first_seen, type, value), for small pages read whole and for large
pages streamed, and a cursor that is not one of this list's is refused."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from store.records import Ioc, utcnow

TYPES = (("ipv4", "203.0.113.{}"), ("domain", "bad{}.evil-host.net"), ("md5", "{:032x}"))


def _iocs(n: int) -> list[Ioc]:
    """``n`` records, three at a time sharing one first_seen, so the order's ties are broken by type and value."""
    now = utcnow()
    rows = []
    for i in range(n):
        kind, pattern = TYPES[i % 3]
        seen = now - timedelta(hours=1, minutes=i // 3)
        rows.append(Ioc(kind, pattern.format(i), "high", "Feed", "commercial", seen, seen, seen, sources=["Feed"]))
    return rows


def _order(rows: list[Ioc]) -> list[tuple[str, str]]:
    return [(r.type, r.value) for r in sorted(rows, key=lambda r: (r.first_seen, r.type, r.value))]


async def _walk(http: Any, params: dict[str, str]) -> tuple[list[tuple[str, str]], int]:
    """Every record of the list by cursor, and how many pages it took."""
    seen: list[tuple[str, str]] = []
    cursor, pages = None, 0
    while True:
        response = await http.get("/api/v1/iocs", params={**params, **({"cursor": cursor} if cursor else {})})
        assert response.status_code == 200, response.text
        body = response.json()
        seen += [(r["type"], r["value"]) for r in body["data"]]
        pages += 1
        cursor = response.headers.get("X-Next-Cursor")
        assert body["meta"].get("next_cursor") == cursor
        if cursor is None:
            return seen, pages


async def test_a_cursor_walk_returns_every_record_once_in_order(server) -> None:
    rows = _iocs(40)
    await server.ctx.iocs.upsert_iocs(rows)
    async with server.client(server.free_key) as http:
        seen, pages = await _walk(http, {"limit": "7"})
        domains, _ = await _walk(http, {"limit": "5", "type": "domain"})
    assert seen == _order(rows) and pages == 6
    assert domains == _order([r for r in rows if r.type == "domain"])


async def test_a_streamed_page_walk_returns_every_record_once_in_order(server) -> None:
    rows = _iocs(450)
    await server.ctx.iocs.upsert_iocs(rows)
    async with server.client(server.pro_key) as http:
        seen, pages = await _walk(http, {"limit": "201"})  # above the pages read whole: streamed
    assert seen == _order(rows) and pages == 3


async def test_an_exact_last_page_says_no_more(server) -> None:
    await server.ctx.iocs.upsert_iocs(_iocs(10))
    async with server.client(server.free_key) as http:
        response = await http.get("/api/v1/iocs", params={"limit": "10"})
    assert "next_cursor" not in response.json()["meta"] and "X-Next-Cursor" not in response.headers


async def test_a_foreign_or_tampered_cursor_or_one_with_an_offset_is_refused(server) -> None:
    await server.ctx.iocs.upsert_iocs(_iocs(10))
    async with server.client(server.free_key) as http:
        cursor = (await http.get("/api/v1/iocs", params={"limit": "3"})).headers["X-Next-Cursor"]
        articles = (await http.get("/api/v1/articles", params={"limit": "1"})).headers.get("X-Next-Cursor")
        tampered = await http.get("/api/v1/iocs", params={"cursor": cursor[:-2] + "xx"})
        both = await http.get("/api/v1/iocs", params={"cursor": cursor, "offset": "3"})
        foreign = await http.get("/api/v1/iocs", params={"cursor": articles or "e30.e30"})
    assert (tampered.status_code, tampered.json()["error"]["code"]) == (400, "invalid_cursor")
    assert (both.status_code, both.json()["error"]["code"]) == (400, "conflicting_parameters")
    assert (foreign.status_code, foreign.json()["error"]["code"]) == (400, "invalid_cursor")
