"""STIX 2.1 bundles and single objects, held to stix2-validator (strict) and stix2.parse."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import orjson
import pytest
import stix2
from stix2patterns.pattern import Pattern

from exporters.base import ExportContext
from exporters.stix import IDENTITY_ID, StixExporter, identity_object, pattern, stix_object, vulnerability_id
from store.records import CTIWIRE_NAMESPACE, Ioc


def objects_by_type(bundle: dict) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for obj in bundle["objects"]:
        grouped.setdefault(obj["type"], []).append(obj)
    return grouped


def pattern_value(pattern: str) -> tuple[str, str]:
    """(object path, literal) of a one-comparison pattern, as the STIX pattern grammar reads it."""
    comparisons = Pattern(pattern).inspect().comparisons
    (object_type, [(path, _op, literal)]), = comparisons.items()
    return f"{object_type}:{'.'.join(str(p) for p in path)}", literal.strip("'").replace("\\'", "'").replace(
        "\\\\", "\\")


def test_bundle_passes_the_validator_and_stix2(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    bundle = check.stix(StixExporter().render(records, ctx))
    assert bundle["type"] == "bundle" and bundle["id"].startswith("bundle--")
    assert bundle["objects"][0] == identity_object()
    primary = bundle["objects"][1:1 + len(records)]
    assert [o["id"] for o in primary] == [stix_object(r)["id"] for r in records]  # spec order: one per IOC


def test_indicator_fields(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    bundle = check.stix(StixExporter().render(records, ctx))
    by_id = {o["id"]: o for o in bundle["objects"]}
    ip = records[0]
    ind = by_id[ip.stix_id]
    assert ind["created"] == ind["valid_from"] == "2026-11-21T13:00:00.000Z"
    assert ind["modified"] == "2026-11-23T10:00:00.000Z"
    assert ind["indicator_types"] == ["malicious-activity"] and ind["confidence"] == 85
    assert ind["pattern"] == "[ipv4-addr:value = '185.220.101.4']" and ind["pattern_type"] == "stix"
    assert ind["created_by_ref"] == IDENTITY_ID and "185.220.101.4" in ind["name"]
    assert [(r["source_name"], r["url"]) for r in ind["external_references"]] == [
        ("CISA Advisories", "https://www.cisa.gov/news/a1"), ("Talos", "https://blog.talosintelligence.com/a2")]
    paths = {r.type: pattern_value(by_id[r.stix_id]["pattern"]) for r in records[:9] if r.type != "cve"}
    assert paths["sha256"][0] == "file:hashes.SHA-256" and paths["md5"][0] == "file:hashes.MD5"
    assert paths["email"] == ("email-addr:value", "invoice@billing-update.example")
    assert paths["url"] == ("url:value", "https://evil.example/gate.php?id=7&x=*")


def test_cves_and_techniques_become_linked_objects(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    bundle = check.stix(StixExporter().render(records, ctx))
    grouped = objects_by_type(bundle)
    cve_ids = Counter(o["external_references"][0]["external_id"] for o in grouped["vulnerability"])
    assert cve_ids == {"CVE-2024-3400": 1, "CVE-2023-23397": 1}  # the CVE record and its mention: one object
    for vuln in grouped["vulnerability"]:
        assert vuln["external_references"][0]["source_name"] == "cve"
    techniques = {o["external_references"][0]["external_id"] for o in grouped["attack-pattern"]}
    assert techniques == {"T1566.001", "T1071.001", "T1190", "T1059.001"}
    rels = {(r["source_ref"], r["relationship_type"], r["target_ref"]) for r in grouped["relationship"]}
    assert (records[0].stix_id, "related-to", vulnerability_id("CVE-2024-3400")) in rels
    ap_1190 = next(o["id"] for o in grouped["attack-pattern"] if o["name"] == "T1190")
    assert (records[0].stix_id, "indicates", ap_1190) in rels
    assert (vulnerability_id("CVE-2024-3400"), "related-to", ap_1190) in rels  # a CVE cannot "indicate"
    ids = [o["id"] for o in bundle["objects"]]
    assert len(ids) == len(set(ids))


def test_ids_are_deterministic_across_rebuilds(records: list[Ioc], ctx: ExportContext, now: datetime) -> None:
    first = StixExporter().render(records, ctx)
    assert StixExporter().render(records, ctx) == first
    later = ExportContext(now + timedelta(hours=5), now - timedelta(days=30), now + timedelta(hours=5), "pro", {})
    ids_a = {o["id"] for o in orjson.loads(first)["objects"]}
    ids_b = {o["id"] for o in orjson.loads(StixExporter().render(records, later))["objects"]}
    reports = {i for i in ids_a if i.startswith("report--")}
    assert reports and ids_a - reports == ids_b  # another window and no articles: the same ids, no reports


def test_stix_object_for_taxii(ioc: Callable[..., Ioc], ctx: ExportContext) -> None:
    ind = stix_object(ioc("domain", "evil.example", article_ids=["a1", "missing"]), ctx)
    assert ind["type"] == "indicator" and ind["id"] == ioc("domain", "evil.example").stix_id
    assert [r["url"] for r in ind["external_references"]] == ["https://www.cisa.gov/news/a1"]
    assert "external_references" not in stix_object(ioc("domain", "evil.example", article_ids=["a1"]))
    vuln = stix_object(ioc("cve", "cve-2021-44228", article_ids=["a2"]), ctx)
    assert vuln["type"] == "vulnerability" and vuln["name"] == "CVE-2021-44228"
    assert vuln["id"] == f"vulnerability--{uuid.uuid5(CTIWIRE_NAMESPACE, 'vulnerability:CVE-2021-44228')}"
    assert vuln["external_references"][0] == {"source_name": "cve", "external_id": "CVE-2021-44228"}
    for obj in (ind, vuln, identity_object()):
        stix2.parse(obj, allow_custom=False)


def test_modified_never_precedes_created(ioc: Callable[..., Ioc], now: datetime) -> None:
    obj = stix_object(ioc("ipv4", "10.0.0.1", first_seen=now, modified=now - timedelta(days=1)))
    assert obj["modified"] == obj["created"]
    stix2.parse(obj, allow_custom=False)


def test_empty_export_is_a_bundle_with_only_the_identity(ctx: ExportContext, check: Any) -> None:
    bundle = check.stix(StixExporter().render([], ctx))
    assert [o["type"] for o in bundle["objects"]] == ["identity", "marking-definition"]  # and the identity's TLP


def test_large_exports_stream_in_chunks(ioc: Callable[..., Ioc], ctx: ExportContext) -> None:
    many = [ioc("ipv4", f"10.{n // 65536}.{n // 256 % 256}.{n % 256}") for n in range(3000)]
    chunks = list(StixExporter().encode(many, ctx))
    assert len(chunks) > 3 and all(len(c) >= 64 * 1024 for c in chunks[:-1])
    assert all(len(c) < 80 * 1024 for c in chunks)


def test_blank_and_lowercase_mentions(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    record = ioc("ipv4", "10.0.0.2", cves=["", "cve-2024-1111", "CVE-2024-1111"], techniques=[" ", "t1059"])
    grouped = objects_by_type(check.stix(StixExporter().render([record], ctx)))
    assert [v["name"] for v in grouped["vulnerability"]] == ["CVE-2024-1111"]
    assert [a["name"] for a in grouped["attack-pattern"]] == ["T1059"]
    assert len(grouped["relationship"]) == 2


@pytest.mark.parametrize("path", ["it's", "a\\b", "\\'", "''", "x\\\\'y"])
def test_a_pattern_literal_escapes_quote_and_backslash(ioc: Callable[..., Ioc], path: str) -> None:
    """STIX 2.1 s. 9.4: inside a string literal ``'`` and ``\\`` are escaped; the literal reads back whole."""
    value = "http://h.example/" + path
    stix_pattern = pattern(ioc("url", value))
    (_type, [(_path, _op, literal)]), = Pattern(stix_pattern).inspect().comparisons.items()
    assert str(literal[1:-1]).replace("\\'", "'").replace("\\\\", "\\") == value
