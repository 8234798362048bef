"""Elastic Common Schema documents, checked field by field against the ECS definitions of the
``@elastic/ecs`` package (tests/format_tools.py): every field exists, every value has its type, every
enumerated value is allowed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from exporters.base import ExportContext, indicator_id
from exporters.ecs import EcsExporter
from store.records import Ioc, iso


def test_one_document_per_indicator(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    documents = check.ecs(EcsExporter().render(records + records[:3], ctx))
    indicators = [r for r in records if r.type not in ("cve", "mitre-attack")]
    assert [d["threat.indicator.name"] for d in documents] == [r.value for r in indicators]
    for document, record in zip(documents, indicators, strict=True):
        assert (document["event.kind"], document["event.category"], document["event.type"]) == (
            "enrichment",
            ["threat"],
            ["indicator"],
        )
        assert document["event.id"] == indicator_id(record)  # stable: the document _id
        assert document["threat.indicator.first_seen"] == iso(record.first_seen)
        assert document["threat.indicator.confidence"] == record.confidence.capitalize()
        assert document["threat.indicator.provider"] == record.feed_name
        assert document["threat.feed.name"] == "ctiwire"


def test_context_rides_on_the_indicator(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    row = ioc("domain", "evil.example.net", article_ids=["a3", "a1"], cves=["CVE-2024-3400"], techniques=["T1190"])
    [document] = check.ecs(EcsExporter().render([row], ctx))
    assert document["threat.indicator.reference"] == "https://example.org/a3?x=1"  # the first reporting article
    assert document["threat.technique.id"] == ["T1190"] and document["tags"] == ["CVE-2024-3400"]
    assert document["threat.indicator.marking.tlp"] == "CLEAR"


def test_the_feed_description_says_what_was_left_out(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    rows = [ioc("ipv4", "203.0.113.7"), ioc("cve", "CVE-2024-3400"), ioc("mitre-attack", "T1190")]
    body = EcsExporter().render(rows, ctx)
    [document] = check.ecs(body)
    assert document["threat.feed.description"].endswith(
        "; 2 CVE or ATT&CK technique record(s) omitted: ECS has no indicator type for it; indicators carry their "
        "CVEs as tags and their techniques in threat.technique.id"
    )
    assert body.count(b"\n") == 1 and orjson.loads(body)["threat"]["indicator"]["ip"] == "203.0.113.7"


def test_an_empty_result_is_an_empty_body(ctx: ExportContext) -> None:
    assert EcsExporter().render([], ctx) == b""
