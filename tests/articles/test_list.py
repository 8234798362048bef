"""GET /api/v1/articles through real HTTP: filters, meta, headers and errors."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from store.records import utcnow

Q = dict[str, Any]
pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _get(seeded, params: Q, key: str | None = None):
    async with seeded.server.client(key or seeded.server.pro_key) as http:
        return await http.get("/api/v1/articles", params={"limit": 1000, **params})


async def _ids(seeded, params: Q) -> set[str]:
    response = await _get(seeded, params)
    assert response.status_code == 200, response.text
    return {row["id"] for row in response.json()["data"]}


async def test_a_default_page_has_meta_links_and_headers(seeded) -> None:
    async with seeded.server.client(seeded.server.free_key) as http:
        response = await http.get("/api/v1/articles")
    body = response.json()
    assert response.status_code == 200, response.text
    assert response.headers["X-Tier-Lookback-Days"] == "7" and response.headers["X-Format-Cost-Multiplier"] == "1"
    assert all(h in response.headers for h in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"))
    meta = body["meta"]
    assert meta["limit"] == 50 and meta["offset"] == 0 and meta["total"] is None and meta["total_estimated"] is False
    assert meta["filters"]["sort"] == "published:desc" and meta["filters"]["time_field"] == "published_at"
    assert meta["source"] == seeded.server.ctx.stores.name
    assert meta["feed_version"] and meta["generated_at"].endswith("Z")
    assert body["links"]["self"].startswith(seeded.server.url + "/api/v1/articles")
    expected = sorted(seeded.visible(7), key=lambda a: (a.published_at, a.id), reverse=True)[:50]
    assert [r["id"] for r in body["data"]] == [a.id for a in expected]
    row = body["data"][0]
    assert "source" not in row and row["source_name"] and row["category_label"]
    assert row["severity_label"] in ("critical", "high", "medium", "low")
    techniques = [t for r in body["data"] for t in r["mitre_techniques"]]
    assert techniques and all(set(t) == {"id", "name", "tactic", "confidence"} for t in techniques)


@pytest.mark.parametrize(("params", "predicate"), [
    ({"category": "malware,iot-ot"}, lambda a: a.category in ("malware", "iot-ot")),
    ({"source_tier": "1,4"}, lambda a: a.source_tier in (1, 4)),
    ({"source_type": "community"}, lambda a: a.source_type == "community"),
    ({"source": "Cisco Talos,Krebs on Security"}, lambda a: a.source_name in ("Cisco Talos", "Krebs on Security")),
    ({"content_type": "educational"}, lambda a: a.content_type == "educational"),
    ({"tech_tags": "vpn,ics"}, lambda a: {"vpn", "ics"} & set(a.tech_tags)),
    ({"industry_tags": "energy"}, lambda a: "energy" in a.industry_tags),
    ({"threat_actor": "APT28,fin7"}, lambda a: {"apt28", "fin7"} & set(a.threat_actors)),
    ({"min_severity": "7.5"}, lambda a: a.severity_score >= 7.5),
    ({"severity": "critical,low"}, lambda a: a.severity_label in ("critical", "low")),
    ({"has_iocs": "true"}, lambda a: a.has_iocs),
    ({"has_iocs": "0"}, lambda a: not a.has_iocs),
    ({"has_ai_summary": "false"}, lambda a: not a.ai_summary),
    ({"has_audio": "1"}, lambda a: a.audio_url is not None),
    ({"submission_type": "user_submitted"}, lambda a: a.submission_type == "user_submitted"),
    ({"mitre_technique": "T1566.001"}, lambda a: "T1566.001" in [t.id for t in a.mitre_techniques]),
])
async def test_filters_match_the_oracle(seeded, params: Q, predicate) -> None:
    expected = {a.id for a in seeded.visible() if predicate(a)}
    assert expected, "the demo dataset should exercise this filter"
    assert await _ids(seeded, params) == expected


async def test_archived_rows_only_on_request(seeded) -> None:
    archived = {a.id for a in seeded.visible(archived=True) if a.is_archived}
    assert archived and not archived & await _ids(seeded, {})
    assert archived <= await _ids(seeded, {"is_archived": "true"})


async def test_cve_text_search_and_its_deprecated_alias(seeded) -> None:
    target = next(a for a in seeded.visible() if a.cve_ids)
    cve = target.cve_ids[0]
    expected = {a.id for a in seeded.visible() if cve in a.title.upper() or cve in (a.ai_summary or "").upper()}
    current = await _get(seeded, {"cve_text_search": cve.lower()})
    legacy = await _get(seeded, {"cve": cve})
    assert {r["id"] for r in current.json()["data"]} == expected == {r["id"] for r in legacy.json()["data"]}
    assert "Deprecation" not in current.headers
    assert legacy.headers["Deprecation"] and legacy.headers["Sunset"].endswith("GMT")


async def test_full_text_search_every_term_and_exclusions(seeded) -> None:
    seeded.needs_text_index()
    both = {a.id for a in seeded.visible() if "ransomware" in a.title.lower() and "ivanti" in a.title.lower()}
    assert both == await _ids(seeded, {"q": "Ransomware IVANTI"})
    ransom = {a.id for a in seeded.visible()
              if "ransomware" in (a.title + " " + a.summary).lower() and "ivanti" not in (a.title + a.summary).lower()}
    assert ransom == await _ids(seeded, {"q": "ransomware -ivanti"})
    in_titles = {a.id for a in seeded.visible() if "backdoor" in a.title.lower()}
    assert in_titles == await _ids(seeded, {"q": "backdoor", "q_field": "title"})


@pytest.mark.parametrize("q", ["a", "12 34", "!!", "ab cd"])
async def test_q_that_fails_sanitisation_is_q_invalid(seeded, q: str) -> None:
    response = await _get(seeded, {"q": q})
    assert response.status_code == 400 and response.json()["error"]["code"] == "q_invalid"


@pytest.mark.parametrize(("params", "code"), [
    ({"severity": "high", "min_severity": "5"}, "conflicting_parameters"),
    ({"offset": "1001"}, "deep_paging_unsupported"),
    ({"until": (utcnow() + timedelta(hours=1)).isoformat()}, "invalid_parameter"),
    ({"mitre_technique": "TA0001"}, "invalid_parameter"),
    ({"cve_text_search": "CVE-24-1"}, "invalid_parameter"),
    ({"sort": "title:asc"}, "invalid_parameter"),
    ({"format": "xml"}, "invalid_parameter"),
    ({"has_iocs": "yes"}, "invalid_parameter"),
    ({"min_severity": "11"}, "invalid_parameter"),
    ({"limit": "ten"}, "invalid_parameter"),
    ({"cursor": "not-a-cursor"}, "invalid_cursor"),
])
async def test_bad_parameters_answer_the_envelope(seeded, params: Q, code: str) -> None:
    response = await _get(seeded, params)
    error = response.json()["error"]
    assert response.status_code == 400 and error["code"] == code and error["request_id"].startswith("req_")


async def test_time_fields_since_until_and_modified_since(seeded) -> None:
    now = utcnow()
    since, until = now - timedelta(days=20), now - timedelta(days=10)
    expected = {a.id for a in seeded.visible() if since <= a.fetched_at <= until}
    assert expected == await _ids(seeded, {"time_field": "fetched_at", "since": since.isoformat(),
                                           "until": until.isoformat()})
    delta = await _get(seeded, {"modified_since": (now - timedelta(days=3)).isoformat(), "sort": "modified:desc"})
    rows = delta.json()["data"]
    assert {r["id"] for r in rows} == {a.id for a in seeded.visible() if a.modified_at >= now - timedelta(days=3)}
    assert [r["modified_at"] for r in rows] == sorted((r["modified_at"] for r in rows), reverse=True)
    assert delta.json()["meta"]["filters"]["time_field"] == "modified_at"


async def test_lookback_is_clamped_and_limits_capped_for_free_keys(seeded) -> None:
    response = await _get(seeded, {"since": "2020-01-01T00:00:00Z", "limit": 500, "sort": "published:asc"},
                          seeded.server.free_key)
    assert response.headers["X-Tier-Lookback-Clamped"] == "true" and response.headers["X-Limit-Capped"] == "true"
    rows = response.json()["data"]
    assert response.json()["meta"]["limit"] == 100 and len(rows) == min(100, len(seeded.visible(7)))
    floor = (utcnow() - timedelta(days=7, minutes=1)).isoformat().replace("+00:00", "Z")
    assert all(r["published_at"] >= floor for r in rows)


async def test_count_strategies(seeded) -> None:
    expected = len([a for a in seeded.visible() if a.category == "malware"])
    exact = (await _get(seeded, {"category": "malware", "count_strategy": "exact"})).json()["meta"]
    planned = (await _get(seeded, {"category": "malware", "count_strategy": "planned"})).json()["meta"]
    assert exact["total"] == expected and exact["total_estimated"] is False
    assert planned["total_estimated"] is True and 0 < planned["total"] <= expected


async def test_sparse_fields_and_expansions(seeded) -> None:
    sparse = (await _get(seeded, {"fields": "title,nonsense", "limit": 5})).json()["data"]
    assert len(sparse) == 5 and all(set(row) == {"id", "title"} for row in sparse)
    rows = (await _get(seeded, {"expand": "iocs,cves,threat_actors", "has_iocs": "true"})).json()["data"]
    assert rows and any(row["iocs"] for row in rows)  # the checks below run on real rows, not an empty page
    by_id = {a.id: a for a in seeded.rows}
    for row in rows:
        article = by_id[row["id"]]
        assert [(i["type"], i["value"]) for i in row["iocs"]] == [(i.type, i.value) for i in article.iocs]
        assert [c["id"] for c in row["cves"]] == article.cve_ids
        assert [t["name"] for t in row["threat_actor_details"]] == article.threat_actors
    plain = (await _get(seeded, {"limit": 3})).json()["data"]
    assert len(plain) == 3 and all("iocs" not in row and "mitre_techniques" in row for row in plain)


async def test_links_never_echo_a_key_sent_as_a_parameter(seeded) -> None:
    async with seeded.server.client() as http:
        response = await http.get("/api/v1/articles", params={"api_key": seeded.server.pro_key, "limit": 2,
                                                             "category": "malware"})
    links = response.json()["links"]
    assert response.status_code == 200 and seeded.server.pro_key not in response.text
    assert "api_key" not in links["self"] and "api_key" not in links["next"]
    assert "category=malware" in links["self"] and "limit=2" in links["next"]
