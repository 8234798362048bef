"""Each defect found by fuzzing and hand-made probes, as a test that failed before its fix."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

from conformance.factories import article

from store.records import ArticleIoc, Ioc, utcnow


def _ioc(kind: str, value: str, article_ids: list[str] | None = None) -> Ioc:
    seen = utcnow() - timedelta(hours=2)
    return Ioc(kind, value, "high", "CISA", "government", seen, seen, seen, article_ids=article_ids or [])


async def test_a_search_value_not_of_the_requested_type_is_400(server) -> None:
    async with server.client(server.free_key) as http:
        answer = await http.get("/api/v1/iocs/search", params={"q": "zz", "type": "ipv4"})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "invalid_parameter" and error["details"]["parameter"] == "q"


async def test_huge_integers_are_400_not_500(server) -> None:
    async with server.client(server.pro_key) as http:
        for path, params in (("/api/v1/iocs", {"offset": str(2**63)}), ("/api/v1/iocs/search", {"q": "evil.example",
                             "offset": str(2**63)}), ("/api/v1/iocs", {"limit": str(2**70)}),
                             ("/api/v1/articles", {"limit": str(2**64)})):
            answer = await http.get(path, params=params)
            assert answer.status_code == 400, (path, params, answer.text)
            assert answer.json()["error"]["code"] == "invalid_parameter"


async def test_a_thousand_terms_are_q_invalid_not_an_outage(server) -> None:
    many = " ".join(f"word{n}x" for n in range(1000))
    async with server.client(server.pro_key) as http:
        answer = await http.get("/api/v1/articles", params={"q": "ransomware " + many, "q_field": "title"})
        repeated = await http.get("/api/v1/articles", params={"q": " ".join(["ransomware"] * 500),
                                                               "q_field": "title"})
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "q_invalid"
    assert repeated.status_code == 200  # duplicates are dropped before the cap counts


async def test_health_says_status_only_without_a_key(server) -> None:
    async with server.client() as http:
        public = (await http.get("/healthz")).json()
    async with server.client(server.pro_key) as http:
        detailed = (await http.get("/healthz")).json()
    assert public["status"] == "ok" and public["database"] == {"status": "ok"} and public["cache"] == {"status": "ok"}
    text = str(public)
    assert "sqlite" not in text.lower() and "/" not in text.replace("1.0.0", "") and "entries" not in text
    assert detailed["database"]["status"] == "ok" and len(detailed["database"]) > 1


async def test_lookup_keeps_related_articles_inside_the_article_lookback(server) -> None:
    old = article(1, published_at=utcnow() - timedelta(days=30), title="An old report")
    new = article(2, published_at=utcnow() - timedelta(days=1), title="A new report")
    for item in (old, new):
        item.iocs = [ArticleIoc("domain", "lookback-test.example")]
    await server.ctx.articles.upsert_articles([old, new])
    await server.ctx.iocs.upsert_iocs([_ioc("domain", "lookback-test.example", [old.id, new.id])])
    async with server.client(server.free_key) as http:
        free = (await http.get("/api/v1/lookup", params={"value": "lookback-test.example"})).json()
    async with server.client(server.pro_key) as http:
        pro = (await http.get("/api/v1/lookup", params={"value": "lookback-test.example"})).json()
    assert "An old report" not in str(free) and "A new report" in str(free)
    assert "An old report" in str(pro)


async def test_keyed_responses_are_not_stored_by_caches(server) -> None:
    async with server.client(server.pro_key) as http:
        page = await http.get("/api/v1/iocs", params={"limit": 1})
        export = await http.get("/api/v1/iocs/stix")
        missing = await http.get("/api/v1/nothing-here")
    async with server.client() as http:
        health = await http.get("/healthz")
    assert page.headers["Cache-Control"] == "no-store"
    assert export.headers["Cache-Control"] == "private, no-cache" and export.headers.get("ETag")
    for answer in (page, export, missing, health):
        assert answer.headers["X-Content-Type-Options"] == "nosniff"


async def test_csv_cells_cannot_become_formulas(server) -> None:
    hostile = article(3, title="=HYPERLINK(\"http://evil.example\",\"x\")", summary="+cmd|' /C calc'!A0",
                      published_at=utcnow() - timedelta(hours=1))
    await server.ctx.articles.upsert_articles([hostile])
    async with server.client(server.pro_key) as http:
        body = (await http.get("/api/v1/articles", params={"format": "csv", "limit": 50})).text
    assert "'=HYPERLINK" in body and "'+cmd" in body
    assert ",=HYPERLINK" not in body and ',"=HYPERLINK' not in body


async def test_a_refused_request_costs_one_unit_not_the_multiplier(server) -> None:
    async with server.client(server.free_key) as http:
        refused = await http.get("/api/v1/iocs/stix")
        after = await http.get("/api/v1/iocs", params={"limit": 1})
    assert refused.status_code == 403
    assert int(refused.headers["X-RateLimit-Remaining"]) == 9
    assert int(after.headers["X-RateLimit-Remaining"]) == 8


async def test_article_ids_are_case_insensitive(server) -> None:
    item = article(4, published_at=utcnow() - timedelta(hours=3))
    await server.ctx.articles.upsert_articles([item])
    async with server.client(server.pro_key) as http:
        lower = await http.get(f"/api/v1/articles/{item.id}")
        upper = await http.get(f"/api/v1/articles/{item.id.upper()}")
    assert lower.status_code == upper.status_code == 200 and upper.json()["id"] == item.id
    assert uuid.UUID(item.id)


async def test_oversized_requests_get_the_envelope_not_a_closed_connection(server) -> None:
    import socket

    from application.http import make_server

    assert make_server  # the server of the tests is the product's (support.start_server uses it)
    port = int(server.url.rsplit(":", 1)[1])

    def raw(line: bytes, headers: bytes = b"") -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(line + b"\r\nHost: x\r\nConnection: close\r\n" + headers + b"\r\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
            return b"".join(chunks)

    # a blocking client in a thread: the server under test answers on this test's event loop
    long_line = await asyncio.to_thread(raw, b"GET /api/v1/iocs?q=" + b"a" * 70_000 + b" HTTP/1.1")
    big_headers = await asyncio.to_thread(raw, b"GET /api/v1/iocs HTTP/1.1", b"".join(
        b"X-Pad-%d: %s\r\n" % (n, b"b" * 1000) for n in range(70)))
    many_fields = await asyncio.to_thread(raw, b"GET /api/v1/iocs?" + b"&".join(b"f%d=1" % n for n in range(1200))
                                          + b" HTTP/1.1")
    for answer, status, code in ((long_line, b"414", b"uri_too_long"), (big_headers, b"431", b"headers_too_large"),
                                 (many_fields, b"400", b"too_many_parameters")):
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.split(b" ")[1] == status, head[:200]
        assert b'"code":"' + code + b'"' in body.replace(b" ", b"") and b"req_" in body
