"""MISP events, held to PyMISP's strict data/schema.json and MISPAttribute(strict=True)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import orjson
from pymisp import MISPEvent

from exporters.base import ExportContext
from exporters.misp import MispExporter
from store.records import Ioc

EXPECTED = {  # spec mapping table, plus MISP's category and to_ids per type
    "ipv4": ("ip-src", "Network activity", True), "ipv6": ("ip-src", "Network activity", True),
    "domain": ("domain", "Network activity", True), "url": ("url", "Network activity", True),
    "md5": ("md5", "Payload delivery", True), "sha1": ("sha1", "Payload delivery", True),
    "sha256": ("sha256", "Payload delivery", True), "sha512": ("sha512", "Payload delivery", True),
    "email": ("email-src", "Payload delivery", False), "cve": ("vulnerability", "External analysis", False),
}


def test_event_passes_the_schema_and_strict_attributes(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    event = check.misp(MispExporter().render(records, ctx))["Event"]
    assert set(event) >= {"uuid", "info", "threat_level_id", "analysis", "distribution", "Attribute"}
    assert len(event["Attribute"]) == len(records)
    loaded = MISPEvent(strict_validation=True)  # PyMISP's own loader, which checks the same schema
    loaded.load(copy.deepcopy({"Event": event}))
    assert [a.value for a in loaded.attributes] == [r.value for r in records]


def test_types_categories_and_to_ids(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    attributes = check.misp(MispExporter().render(records, ctx))["Event"]["Attribute"]
    for record, attribute in zip(records, attributes, strict=True):
        assert (attribute["type"], attribute["category"], attribute["to_ids"]) == EXPECTED[record.type]
        assert attribute["value"] == record.value
        assert record.feed_name in attribute["comment"]
    tags = {t["name"] for t in attributes[0]["Tag"]}
    assert 'ctiwire:confidence="high"' in tags and 'ctiwire:attack-technique="T1190"' in tags


def test_info_names_the_time_range_and_threat_level(records: list[Ioc], ctx: ExportContext) -> None:
    event = orjson.loads(MispExporter().render(records, ctx))["Event"]
    assert "2026-11-16T13:00:00.000Z" in event["info"] and "2026-11-23T13:00:00.000Z" in event["info"]
    assert event["threat_level_id"] == "1" and event["date"] == "2026-11-23"
    low_only = [r for r in records if r.confidence == "low"]
    assert orjson.loads(MispExporter().render(low_only, ctx))["Event"]["threat_level_id"] == "3"


def test_uuids_are_deterministic(records: list[Ioc], ctx: ExportContext, now: datetime) -> None:
    first = MispExporter().render(records, ctx)
    assert MispExporter().render(records, ctx) == first
    event = orjson.loads(first)["Event"]
    uuids = [a["uuid"] for a in event["Attribute"]]
    assert len(set(uuids)) == len(uuids)
    other = ExportContext(now, now - timedelta(days=1), now, "pro", {})
    assert orjson.loads(MispExporter().render(records, other))["Event"]["uuid"] != event["uuid"]


def test_repeated_values_become_one_attribute(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    twice = [ioc("domain", "evil.example"), ioc("domain", "EVIL.example"), ioc("ipv4", "10.0.0.1")]
    assert len(check.misp(MispExporter().render(twice, ctx))["Event"]["Attribute"]) == 2


def test_empty_event_is_valid(ctx: ExportContext, check: Any) -> None:
    event = check.misp(MispExporter().render([], ctx))["Event"]
    assert event["Attribute"] == [] and event["threat_level_id"] == "4"
