"""GET /metrics: Prometheus text a parser accepts, the counts the service made, and only for
operators (loopback, CTIWIRE_METRICS_ALLOW, or CTIWIRE_METRICS_TOKEN)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from support import cli_env, make_settings, spawn_server, start_server, stop_server


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def _value(text: str, name: str, **labels: str) -> float:
    return sum(v for (n, ls), v in _samples(text).items() if n == name and labels.items() <= dict(ls).items())


async def test_requests_refusals_and_cache_results_are_counted(server) -> None:
    async with server.client() as http:
        before = (await http.get("/metrics")).text
    async with server.client(server.free_key) as http:
        for _ in range(12):  # a Free key has 10 a minute: two 429s
            await http.get("/api/v1/iocs", params={"limit": 1})
    async with server.client(server.pro_key) as http:
        await http.get("/api/v1/iocs/stix")
        await http.get("/api/v1/iocs/stix")
    async with server.client() as http:
        answer = await http.get("/metrics")
    after = answer.text
    assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("text/plain")
    def grew(name: str, **labels: str) -> float:
        return _value(after, name, **labels) - _value(before, name, **labels)

    assert grew("ctiwire_http_requests_total", route="IocListHandler", status="200") == 10
    assert grew("ctiwire_http_requests_total", route="IocListHandler", status="429") == 2
    assert grew("ctiwire_export_build_seconds_count", format="stix") == 1
    assert grew("ctiwire_rate_limit_refusals_total", tier="free") == 2
    assert _value(after, "ctiwire_http_request_duration_seconds_count", route="IocListHandler") >= 12
    assert {r: grew("ctiwire_cache_results_total", format="stix", result=r) for r in ("hit", "miss")} == \
        {"hit": 1, "miss": 1}


async def test_only_operators_see_the_metrics(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, trusted_proxies="127.0.0.0/8", metrics_allow="198.51.100.0/24",
                             metrics_token="s3cret-metrics-token")
    server = await start_server(settings)
    try:
        async with server.client() as http:
            outside = await http.get("/metrics", headers={"X-Real-IP": "203.0.113.5"})
            allowed = await http.get("/metrics", headers={"X-Real-IP": "198.51.100.7"})
            token = await http.get("/metrics", headers={"X-Real-IP": "203.0.113.5",
                                                        "Authorization": "Bearer s3cret-metrics-token"})
            wrong = await http.get("/metrics", headers={"X-Real-IP": "203.0.113.5",
                                                        "Authorization": "Bearer nope"})
    finally:
        await stop_server(server)
    assert outside.status_code == wrong.status_code == 403 and outside.json()["error"]["code"] == "forbidden"
    assert allowed.status_code == token.status_code == 200


@pytest.mark.slow  # two server processes
def test_several_processes_add_up(tmp_path: Path) -> None:
    server = spawn_server(cli_env(tmp_path, CTIWIRE_PROCESSES="2"), "--no-seed")
    try:
        key = json.loads((tmp_path / "demo-keys.json").read_text())["pro"]
        for _ in range(40):  # new connections: the kernel spreads them over both processes
            assert httpx.get(server.url + "/api/v1/sources", headers={"X-API-Key": key}).status_code == 200
        text = httpx.get(server.url + "/metrics").text
    finally:
        server.stop()
    assert _value(text, "ctiwire_http_requests_total", route="SourcesHandler", status="200") == 40
    assert len(list((tmp_path / "metrics").glob("*.db"))) >= 2  # both processes wrote their samples


async def test_a_failed_extractor_is_counted_in_the_exposition(server, monkeypatch: pytest.MonkeyPatch) -> None:
    """An extractor failing on an article (README, "Enrichment never fails a whole article") shows in /metrics."""
    from ingest.enrich import enrich, pipeline

    def broken(*_args: object) -> list[str]:
        raise ValueError("Invalid IPv6 URL")

    async with server.client() as http:
        before = (await http.get("/metrics")).text
        monkeypatch.setattr(pipeline, "extract_actors", broken)
        found = enrich("Loader campaign", "The loader beaconed to hxxps://invoice-sync[.]top/gate.php.",
                       article_id="a-1")
        after = (await http.get("/metrics")).text
    assert found.errors == ["actors: ValueError: Invalid IPv6 URL"] and found.iocs
    grew = _value(after, "ctiwire_enrich_failures_total", extractor="actors") - _value(
        before, "ctiwire_enrich_failures_total", extractor="actors")
    assert grew == 1
