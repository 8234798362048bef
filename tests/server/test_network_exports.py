"""The network formats through real HTTP on every backend: the export endpoint serves each with its media
type, cost multiplier, validators and filters, and the document passes its consumer's tool
(tests/format_tools.py: named-checkzone, suricata-check, the ECS definitions)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import format_tools

from store.records import Ioc, utcnow


def _ioc(ioc_type: str, value: str, confidence: str = "high") -> Ioc:
    seen = utcnow() - timedelta(hours=2)
    return Ioc(ioc_type, value, confidence, "Talos", "commercial", seen, seen, seen, sources=["Talos"])


ROWS = [
    _ioc("ipv4", "203.0.113.7"),
    _ioc("ipv4", "198.51.100.9", "low"),
    _ioc("ipv6", "2001:db8::7"),
    _ioc("domain", "c2.evil-host.net"),
    _ioc("url", "http://c2.evil-host.net/gate.php?id=1"),
    _ioc("sha256", "e" * 64),
    _ioc("cve", "CVE-2024-3400"),
]


async def test_a_blocklist_of_one_type_with_its_cost_and_validators(server: Any) -> None:
    await server.ctx.iocs.upsert_iocs(ROWS)
    async with server.client(server.pro_key) as http:
        answer = await http.get("/api/v1/iocs/blocklist", params={"type": "ipv4", "window": "7d"})
        again = await http.get(
            "/api/v1/iocs/blocklist",
            params={"type": "ipv4", "window": "7d"},
            headers={"If-None-Match": answer.headers["etag"]},
        )
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "text/plain; charset=utf-8"
    assert answer.headers["x-format-cost-multiplier"] == "2"
    assert (
        answer.headers["content-disposition"].startswith("attachment")
        and ".blocklist.txt" in answer.headers["content-disposition"]
    )
    assert format_tools.blocklist(answer.content) == {"ipv4": ["198.51.100.9", "203.0.113.7"]}
    assert "# filters: type=ipv4, limit=100\n" in answer.text
    assert again.status_code == 304


async def test_rpz_suricata_and_ecs_pass_their_tools(server: Any) -> None:
    await server.ctx.iocs.upsert_iocs(ROWS)
    async with server.client(server.pro_key) as http:
        rpz, suricata, ecs = [await http.get(f"/api/v1/iocs/{fmt}") for fmt in ("rpz", "suricata", "ecs")]
    assert [r.status_code for r in (rpz, suricata, ecs)] == [200] * 3
    assert rpz.headers["content-type"] == "text/dns" and rpz.headers["x-format-cost-multiplier"] == "2"
    triggers = {owner for owner, rtype, _ in format_tools.rpz(rpz.content) if rtype == "CNAME"}
    assert triggers == {"c2.evil-host.net.rpz.ctiwire.", "*.c2.evil-host.net.rpz.ctiwire."}
    assert suricata.headers["x-format-cost-multiplier"] == "5"
    assert len(format_tools.suricata(suricata.content)) == 3 + 3 + 1  # addresses, the domain's three, the URL
    assert ecs.headers["content-type"] == "application/x-ndjson"
    documents = format_tools.ecs(ecs.content)
    assert sorted(d["threat.indicator.type"] for d in documents) == [
        "domain-name",
        "file",
        "ipv4-addr",
        "ipv4-addr",
        "ipv6-addr",
        "url",
    ]


async def test_a_free_key_gets_no_network_export(server: Any) -> None:
    async with server.client(server.free_key) as http:
        answers = [await http.get(f"/api/v1/iocs/{fmt}") for fmt in ("blocklist", "rpz", "suricata", "ecs")]
    assert [a.status_code for a in answers] == [403] * 4
