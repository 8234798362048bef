"""Elastic Common Schema (ECS) threat indicator documents, one JSON document per line (NDJSON).

Each supported record is one document as Elastic's threat intelligence integrations write them (ECS
"Threat" field set, "threat.indicator"): ``event.kind: enrichment``, ``event.category: [threat]``,
``event.type: [indicator]``; ``threat.indicator.type`` (one of its expected values) and the value in the
field the registry names for the type (``threat.indicator.ip``, ``.url.domain``, ``.url.full``,
``.file.hash.sha256``, ``.email.address``...); first and last seen, last change, the confidence (ECS
spells it ``Low``/``Medium``/``High``), the provider (the feed that reported it), the first reporting
article as the reference, TLP:CLEAR (public news), the ATT&CK techniques in ``threat.technique.id`` and
the CVEs in ``tags``. ``threat.feed`` names this feed and its window; since NDJSON has no comments, that
description also says which records were left out and why (CVE and technique records have no ECS
indicator type). Documents load with the Bulk API or Filebeat's NDJSON input into an index whose mapping
is ECS (``threat.indicator.*`` in the ``logs-ti_*`` templates); ``event.id`` is the indicator's STIX id,
stable across builds, to use as the document ``_id``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import orjson

from config.tiers import SCOPE_EXPORTS
from exporters.base import PRODUCT, ExportContext, Exporter, chunked, indicator_id, unique_records
from store.ioctypes import Ecs, mapping, skipped_note, supported
from store.records import Ioc, iso

CONFIDENCE: dict[str, str] = {"high": "High", "medium": "Medium", "low": "Low"}
TLP = "CLEAR"  # TLP 2.0: public news, no restriction on disclosure


def nested(flat: dict[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1}`` as ``{"a": {"b": 1}}``: ECS documents are JSON objects, dots are the object path."""
    root: dict[str, Any] = {}
    for path, value in flat.items():
        *parents, leaf = path.split(".")
        node = root
        for name in parents:
            node = node.setdefault(name, {})
        node[leaf] = value
    return root


def feed_fields(iocs: Sequence[Ioc], ctx: ExportContext) -> dict[str, Any]:
    """``threat.feed.*``: the same on every document of one build."""
    left_out = "; ".join(skipped_note((i.type for i in iocs), "ecs"))
    description = f"{PRODUCT} IOCs first seen or updated from {ctx.range_text} ({ctx.tier} tier)" + (
        f"; {left_out}" if left_out else ""
    )
    return {"threat.feed.name": PRODUCT, "threat.feed.description": description}


def document(ioc: Ioc, ctx: ExportContext, feed: dict[str, Any]) -> dict[str, Any]:
    """One flat ECS document (dotted paths) for a record."""
    ecs = mapping(ioc.type, "ecs", Ecs)
    refs = ctx.refs(ioc)
    flat: dict[str, Any] = {
        "@timestamp": iso(ioc.modified),
        "event.kind": "enrichment",
        "event.category": ["threat"],
        "event.type": ["indicator"],
        "event.id": indicator_id(ioc),
        "event.provider": PRODUCT,
        **feed,
        "threat.indicator.type": ecs.indicator_type,
        **{f"threat.indicator.{field}": ioc.value for field in ecs.fields},
        "threat.indicator.name": ioc.value,
        "threat.indicator.first_seen": iso(ioc.first_seen),
        "threat.indicator.last_seen": iso(ioc.last_seen),
        "threat.indicator.modified_at": iso(ioc.modified),
        "threat.indicator.confidence": CONFIDENCE.get(ioc.confidence, "Not Specified"),
        "threat.indicator.provider": ioc.feed_name,
        "threat.indicator.marking.tlp": TLP,
    }
    if refs and refs[0].url:
        flat["threat.indicator.reference"] = refs[0].url
    if ioc.techniques:
        flat["threat.technique.id"] = list(ioc.techniques)
    if ioc.cves:
        flat["tags"] = list(ioc.cves)
    return flat


class EcsExporter(Exporter):
    """NDJSON, one ECS document per supported record; an empty result is an empty body."""

    format_id: ClassVar[str] = "ecs"
    media_type: ClassVar[str] = "application/x-ndjson"
    extension: ClassVar[str] = "ecs.ndjson"
    scope: ClassVar[str] = SCOPE_EXPORTS
    summary: ClassVar[str] = "Elastic Common Schema threat indicator documents (NDJSON)"

    def encode(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        feed = feed_fields(iocs, ctx)
        records = (i for i in unique_records(iocs) if supported(i.type, "ecs"))
        yield from chunked(orjson.dumps(nested(document(i, ctx, feed))) + b"\n" for i in records)
