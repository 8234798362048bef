"""Cursors, streamed NDJSON/CSV exports, the single-read form and /api/v1/sources."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import orjson
import pytest

from exporters.articles import CSV_COLUMNS
from store.records import utcnow

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _walk(http, params: dict, limit: int = 97) -> list[dict]:
    rows, cursor = [], None
    for _ in range(200):
        page = await http.get("/api/v1/articles", params={**params, "limit": limit, **({"cursor": cursor} if cursor
                                                                                         else {})})
        assert page.status_code == 200, page.text
        rows.extend(page.json()["data"])
        cursor = page.headers.get("X-Next-Cursor")
        if cursor is None:
            assert "next" not in page.json()["links"]
            return rows
        assert page.json()["links"]["next"].endswith("cursor=" + cursor.replace("=", "%3D"))
    raise AssertionError("the walk did not end")


@pytest.mark.parametrize(("sort", "key", "reverse"), [
    ("published:desc", "published_at", True), ("published:asc", "published_at", False),
    ("modified:desc", "modified_at", True), ("severity:desc", "severity_score", True),
    ("engagement:desc", "rank_score", True),
])
async def test_every_sort_walks_each_row_once_in_order(seeded, sort: str, key: str, reverse: bool) -> None:
    async with seeded.server.client(seeded.server.pro_key) as http:
        rows = await _walk(http, {"sort": sort})
    expected = sorted(seeded.visible(), key=lambda a: (getattr(a, key), a.id), reverse=reverse)
    assert [r["id"] for r in rows] == [a.id for a in expected]


async def test_cursors_are_tied_to_their_sort_and_tamper_proof(seeded) -> None:
    async with seeded.server.client(seeded.server.pro_key) as http:
        first = await http.get("/api/v1/articles", params={"limit": 10})
        cursor = first.headers["X-Next-Cursor"]
        other_sort = await http.get("/api/v1/articles", params={"cursor": cursor, "sort": "severity:desc"})
        flipped = cursor[:5] + ("A" if cursor[5] != "A" else "B") + cursor[6:]
        tampered = await http.get("/api/v1/articles", params={"cursor": flipped})
        with_offset = await http.get("/api/v1/articles", params={"cursor": cursor, "offset": 5})
    assert other_sort.status_code == tampered.status_code == 400
    assert other_sort.json()["error"]["code"] == tampered.json()["error"]["code"] == "invalid_cursor"
    assert with_offset.json()["error"]["code"] == "conflicting_parameters"


async def test_a_free_walk_never_leaves_the_window(seeded) -> None:
    async with seeded.server.client(seeded.server.free_key) as http:
        rows = await _walk(http, {"sort": "published:asc", "since": "2000-01-01T00:00:00Z"}, limit=40)
    assert {r["id"] for r in rows} == {a.id for a in seeded.visible(7)}


async def test_ndjson_and_csv_exports_stream_every_row(seeded) -> None:
    async with seeded.server.client(seeded.server.pro_key) as http:
        ndjson = await http.get("/api/v1/articles", params={"format": "ndjson", "limit": 5000})
        text_csv = await http.get("/api/v1/articles", params={"format": "csv", "limit": 5000, "category": "malware"})
    expected = {a.id for a in seeded.visible()}
    assert ndjson.headers["Content-Type"] == "application/x-ndjson"
    assert ndjson.headers["X-Format-Cost-Multiplier"] == "5" and "X-Next-Cursor" not in ndjson.headers
    lines = [orjson.loads(line) for line in ndjson.content.splitlines()]
    assert {row["id"] for row in lines} == expected and len(lines) == len(expected)
    assert all(set(row) == set(lines[0]) - {"ai_summary"} | (set(row) & {"ai_summary"}) for row in lines)
    assert text_csv.headers["Content-Type"].startswith("text/csv") and "attachment" in text_csv.headers[
        "Content-Disposition"]
    table = list(csv.reader(io.StringIO(text_csv.text)))
    assert tuple(table[0]) == CSV_COLUMNS
    by_id = {a.id: a for a in seeded.rows}
    assert {r[0] for r in table[1:]} == {a.id for a in seeded.visible() if a.category == "malware"}
    for row in table[1:]:
        cells = dict(zip(CSV_COLUMNS, row, strict=True))
        article = by_id[cells["id"]]
        assert cells["title"] == article.title and orjson.loads(cells["cve_ids"]) == article.cve_ids
        assert cells["has_iocs"] == ("true" if article.has_iocs else "false")


async def test_exports_need_the_export_scope(seeded) -> None:
    async with seeded.server.client(seeded.server.free_key) as http:
        refused = await http.get("/api/v1/articles", params={"format": "csv"})
    error = refused.json()["error"]
    assert refused.status_code == 403 and error["code"] == "insufficient_scope"
    assert error["details"]["required_scope"] == "read:articles:export" and "upgrade_url" in error["details"]


async def test_single_read_form(seeded) -> None:
    article = next(a for a in seeded.visible(7) if a.iocs and a.mitre_techniques)
    old = next(a for a in seeded.visible() if a.published_at < utcnow() - timedelta(days=8))
    async with seeded.server.client(seeded.server.free_key) as http:
        found = await http.get(f"/api/v1/articles/{article.id}")
        unknown = await http.get("/api/v1/articles/6b3f2c1e-0000-4000-8000-000000000000")
        malformed = await http.get("/api/v1/articles/not-a-uuid")
        outside = await http.get(f"/api/v1/articles/{old.id}")
    body = found.json()
    assert found.status_code == 200 and body["id"] == article.id and body["severity"] == article.severity_label
    assert body["source"] and "/" not in body["source"] and body["categories"] == [article.category]
    assert body["iocs"] == [{"type": i.type, "value": i.value} for i in article.iocs]
    assert body["mitre_techniques"] == [{"id": t.id, "name": t.name} for t in article.mitre_techniques]
    assert body["points"] == article.score and body["tags"] == article.tags
    for response in (unknown, malformed, outside):
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


async def test_sources_lists_the_names_the_filter_accepts(seeded) -> None:
    async with seeded.server.client(seeded.server.free_key) as http:
        listed = (await http.get("/api/v1/sources")).json()["data"]
    names = {row["name"] for row in listed}
    assert {a.source_name for a in seeded.rows} <= names and len(listed) >= 30
    talos = next(row for row in listed if row["name"] == "Cisco Talos")
    assert talos["article_count"] == sum(a.source_name == "Cisco Talos" for a in seeded.rows)
    assert set(talos["health"]) == {"last_attempt_at", "last_success_at", "last_error", "items_seen", "failed_articles"}
