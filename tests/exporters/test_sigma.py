"""Sigma rule streams: pySigma parses them, its core validators pass, Splunk and Elasticsearch convert them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import yaml
from sigma.validators.core.values import EscapedWildcardIssue

from exporters.base import ExportContext
from exporters.sigma import VALUES_PER_RULE, SigmaExporter
from store.records import Ioc

RULE_KEYS = {"title", "id", "status", "description", "references", "author", "date", "modified", "tags",
             "logsource", "detection", "falsepositives", "level"}


def literal_wildcards(issue: Any) -> bool:
    """The one expected finding: URLs with a literal ``?`` or ``*``, escaped on purpose."""
    return isinstance(issue, EscapedWildcardIssue)


def literal(value: Any) -> str:
    """A parsed SigmaString as text; a real (unescaped) wildcard would show as <wildcard>."""
    return "".join(part if isinstance(part, str) else "<wildcard>" for part in value.s)


def values(rule: Any) -> list[str]:
    """The values as written in the rule (before modifiers such as ``contains`` add wildcards)."""
    [item] = rule.detection.detections["selection"].detection_items
    return [literal(v) for v in item.original_value]


def test_rules_parse_validate_and_convert(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    collection = check.sigma(SigmaExporter().render(records, ctx), literal_wildcards)
    by_source = {(r.logsource.category, r.level.name.lower()) for r in collection.rules}
    assert ("network_connection", "high") in by_source and ("dns_query", "low") in by_source
    assert ("proxy", "medium") in by_source and ("process_creation", "high") in by_source
    for rule in collection.rules:
        assert rule.id and rule.title and rule.status and rule.author == "ctiwire" and rule.falsepositives
        assert isinstance(rule.date, date)
        assert "detection.emerging-threats" in [str(t) for t in rule.tags]


def test_values_tags_and_references(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    collection = check.sigma(SigmaExporter().render(records, ctx), literal_wildcards)
    by_category = {}
    for rule in collection.rules:
        by_category.setdefault(rule.logsource.category, []).extend(values(rule))
    assert "https://evil.example/gate.php?id=7&x=*" in by_category["proxy"]  # wildcards matched literally
    assert "SHA256=275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f" in by_category["process_creation"]
    assert len(by_category["dns_query"]) == 31 and len(by_category["network_connection"]) == 32
    ip_high = next(r for r in collection.rules if r.logsource.category == "network_connection"
                   and r.level.name == "HIGH")
    tags = [str(t) for t in ip_high.tags]
    assert "attack.t1190" in tags and "cve.2024-3400" in tags
    assert "https://www.cisa.gov/news/a1" in ip_high.references


def test_rules_are_chunked_with_stable_ids(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    many = [ioc("ipv4", f"10.0.{n // 256}.{n % 256}", confidence="high") for n in range(2 * VALUES_PER_RULE + 7)]
    body = SigmaExporter().render(many, ctx)
    collection = check.sigma(body)
    assert [len(values(r)) for r in collection.rules] == [VALUES_PER_RULE, VALUES_PER_RULE, 7]
    assert len({r.title for r in collection.rules}) == 3
    assert SigmaExporter().render(many, ctx) == body
    again = check.sigma(SigmaExporter().render(many[:10], ctx))
    assert again.rules[0].id == collection.rules[0].id  # a later export of the group revises the same rule


def test_documents_have_only_rule_keys(records: list[Ioc], ctx: ExportContext) -> None:
    docs = list(yaml.safe_load_all(SigmaExporter().render(records, ctx)))
    assert docs and all(set(doc) <= RULE_KEYS for doc in docs)
    assert all(set(doc["detection"]) == {"selection", "condition"} for doc in docs)


def test_types_without_a_log_source_are_left_out(ioc: Callable[..., Ioc], ctx: ExportContext) -> None:
    others = [ioc("email", "a@b.example"), ioc("cve", "CVE-2024-1"), ioc("sha512", "a" * 128)]
    assert list(yaml.safe_load_all(SigmaExporter().render(others, ctx))) == []


def test_empty_stream_parses_as_no_rules(ctx: ExportContext, check: Any) -> None:
    body = SigmaExporter().render([], ctx)
    assert body.startswith(b"# ") and len(check.sigma(body).rules) == 0
