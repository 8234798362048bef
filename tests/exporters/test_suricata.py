"""Suricata rules, parsed and analysed by ``suricata-check``: no error (nor warning) on any rule, sids
unique and the same in every build, confidence and source in the metadata."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from exporters import suricata as module
from exporters.base import ExportContext
from exporters.suricata import SID_FIRST, SID_LAST, SuricataExporter, assign_sids
from store.records import Ioc

RULES_PER_TYPE = {"ipv4": 1, "ipv6": 1, "domain": 3, "url": 1}


def options(rule: Any) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for option in rule.options:
        found.setdefault(option.name, []).append(option.value)
    return found


def contents(rule: Any) -> list[str]:
    """Each content as the bytes it matches (``|hex|`` runs decoded)."""
    decode = lambda m: bytes.fromhex(m.group(1)).decode()  # noqa: E731
    return [re.sub(r"\|([0-9a-f ]+)\|", decode, v.strip('"')) for v in options(rule).get("content", [])]


def test_rules_pass_suricata_check(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    rules = check.suricata(SuricataExporter().render(records, ctx))
    assert len(rules) == sum(RULES_PER_TYPE.get(r.type, 0) for r in records)
    sids = [int(options(r)["sid"][0]) for r in rules]
    assert len(set(sids)) == len(sids) and all(SID_FIRST <= s <= SID_LAST for s in sids)
    assert {r.proto for r in rules} == {"ip", "dns", "tls", "http"}
    assert all(options(r)["classtype"] == ["bad-unknown"] for r in rules)


def test_each_match_in_its_buffer(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    rows = [
        ioc("domain", "evil.example.net", confidence="high", feed_name="CISA Advisories"),
        ioc("url", 'http://evil.example.net/dl/a.exe?x=1;y="2"|z\\', confidence="low"),
        ioc("ipv6", "2001:db8::7"),
    ]
    rules = check.suricata(SuricataExporter().render(rows, ctx))
    by_proto = {r.proto: r for r in rules}
    assert [r.dest_addr for r in rules if r.proto == "ip"] == ["2001:db8::7"]
    assert {o for r in rules for o in options(r)} >= {"dns.query", "tls.sni", "http.host", "http.uri", "dotprefix"}
    assert contents(by_proto["dns"]) == [".evil.example.net"]
    url_rule = next(r for r in rules if "http.uri" in options(r))
    assert contents(url_rule) == ['/dl/a.exe?x=1;y="2"|z\\', "evil.example.net"]
    metadata = " ".join(options(by_proto["dns"])["metadata"])
    assert "confidence High" in metadata and "source CISA_Advisories" in metadata
    assert "confidence Low" in " ".join(options(url_rule)["metadata"])


def test_sids_are_stable_across_builds(records: list[Ioc], ctx: ExportContext) -> None:
    parse = pytest.importorskip("suricata_check.utils.rule", reason="suricata-check is not installed").parse

    def sid_by_match(rows: list[Ioc]) -> dict[tuple[str, str, str], int]:
        lines = SuricataExporter().render(rows, ctx).decode().splitlines()
        rules = [parse(line) for line in lines if not line.startswith("#")]
        found = {(r.proto, r.dest_addr, " ".join(contents(r))): int(options(r)["sid"][0]) for r in rules}
        assert len(found) == len(rules)
        return found

    full, part = sid_by_match(records), sid_by_match(list(reversed(records[5:40])))
    assert len(part) > 20
    assert all(full[key] == sid for key, sid in part.items())


def test_colliding_sids_are_told_apart_deterministically(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "sid_of", lambda buffer, value: SID_LAST)
    keys = [("dns.query", "b.example"), ("dns.query", "a.example"), ("tls.sni", "a.example")]
    sids = assign_sids(keys)
    assert sids == assign_sids(list(reversed(keys)))
    assert sorted(sids.values()) == [SID_FIRST, SID_FIRST + 1, SID_LAST]  # wrapping around the range
    assert sids[("dns.query", "a.example")] == SID_LAST


def test_what_has_no_rule_is_counted(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    rows = [ioc("url", "ftp://files.example/a.bin"), ioc("sha256", "a" * 64), ioc("email", "x@evil.example")]
    body = SuricataExporter().render(rows, ctx)
    assert check.suricata(body) == []
    text = body.decode()
    assert "# 1 record(s) omitted: no valid host name or HTTP URL to match" in text
    assert "SHA-512 record(s) omitted: Suricata matches file digests only from list files" in text
    assert "# 1 e-mail sender record(s) omitted" in text
