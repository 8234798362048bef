"""STIX 2.1 bundles of IOC records, built as plain dicts and encoded with orjson (spec "STIX bundle").

Building through ``stix2`` objects costs about 100 times plain dicts (mostly pattern
re-validation: BENCHMARKS.md), so the request path never touches ``stix2``; the tests
hold these dicts to ``stix2.parse`` and to ``stix2-validator`` in strict mode instead.

Every id is a UUIDv5 under the project namespace (STIX 2.1 section 2.9 permits deterministic ids; the
SCO namespace is reserved for cyber-observables), so rebuilding an export never changes an id.
:func:`stix_object` is also what the TAXII server serves, one object per IOC record.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import orjson

from config.tiers import SCOPE_STIX
from exporters.base import ExportContext, Exporter, chunked, indicator_id, records_digest, stable_uuid
from store.ioctypes import Stix, mapping
from store.records import Ioc, iso
from store.stixids import attack_pattern_id as attack_pattern_id
from store.stixids import vulnerability_id as vulnerability_id

IDENTITY_ID = f"identity--{stable_uuid('identity', 'ctiwire')}"
# A fixed date: the identity never changes, so neither may its version (STIX 2.1 s. 3.2, "modified").
_IDENTITY_DATE = "2026-01-01T00:00:00.000Z"
IDENTITY: dict[str, Any] = {
    "type": "identity",
    "spec_version": "2.1",
    "id": IDENTITY_ID,
    "created": _IDENTITY_DATE,
    "modified": _IDENTITY_DATE,
    "name": "ctiwire",
    "description": "ctiwire threat-intelligence API: indicators aggregated from security news and advisories",
    "identity_class": "organization",
}

# STIX 2.1 Appendix A, "None/Low/Med/High" scale: the midpoints of Low, Med and High.
CONFIDENCE_SCORES: dict[str, int] = {"high": 85, "medium": 50, "low": 15}


def identity_object() -> dict[str, Any]:
    """The ctiwire ``identity`` (a fresh copy: callers may add to it)."""
    return dict(IDENTITY)



def relationship_id(source: str, kind: str, target: str) -> str:
    return f"relationship--{stable_uuid('relationship', source, kind, target)}"


def pattern(ioc: Ioc) -> str:
    """The STIX pattern of one record on its type's object path (STIX 2.1 s. 9, registry ``stix``); only ``\\``
    and ``'`` need escaping in a string literal (s. 9.4)."""
    literal = ioc.value.replace("\\", "\\\\").replace("'", "\\'")
    return f"[{mapping(ioc.type, 'stix', Stix).path} = '{literal}']"


def _external_refs(ioc: Ioc, ctx: ExportContext | None) -> list[dict[str, str]]:
    if ctx is None:
        return []
    # source_name is required and must be non-empty; an article with a blank feed name is still cited.
    return [{"source_name": ref.source_name or "ctiwire", "url": ref.url, "description": ref.title}
            for ref in ctx.refs(ioc)]


def _labels(ioc: Ioc) -> list[str]:
    return list(dict.fromkeys([ioc.type, f"confidence-{ioc.confidence}", ioc.source_category, *ioc.industries]))


def _description(ioc: Ioc) -> str:
    sources = ", ".join(ioc.sources) or ioc.feed_name
    return (f"{ioc.type} {ioc.value} reported by {ioc.feed_name} ({ioc.source_category}); "
            f"confidence {ioc.confidence}; sources: {sources}")


def _dates(ioc: Ioc) -> tuple[str, str]:
    """created and modified; modified never precedes created (STIX 2.1 s. 3.2)."""
    return iso(ioc.first_seen), iso(max(ioc.modified, ioc.first_seen))


def indicator_object(ioc: Ioc, ctx: ExportContext | None = None) -> dict[str, Any]:
    created, modified = _dates(ioc)
    obj: dict[str, Any] = {
        "type": "indicator", "spec_version": "2.1", "id": indicator_id(ioc), "created_by_ref": IDENTITY_ID,
        "created": created, "modified": modified, "name": f"{ioc.type}: {ioc.value}",
        "description": _description(ioc), "indicator_types": ["malicious-activity"],
        "pattern": pattern(ioc), "pattern_type": "stix", "valid_from": created,
        "confidence": CONFIDENCE_SCORES.get(ioc.confidence, 15), "labels": _labels(ioc),
    }
    refs = _external_refs(ioc, ctx)
    if refs:
        obj["external_references"] = refs
    return obj


def vulnerability_object(cve: str, created: str, modified: str, extra_refs: list[dict[str, str]] | None = None,
                         description: str | None = None) -> dict[str, Any]:
    """A CVE as a ``vulnerability`` (STIX 2.1 s. 4.19: external id ``CVE-...`` under source ``cve``)."""
    obj: dict[str, Any] = {
        "type": "vulnerability", "spec_version": "2.1", "id": vulnerability_id(cve), "created_by_ref": IDENTITY_ID,
        "created": created, "modified": modified, "name": cve.upper(),
        "external_references": [{"source_name": "cve", "external_id": cve.upper()}, *(extra_refs or [])],
    }
    if description:
        obj["description"] = description
    return obj


def stix_object(ioc: Ioc, ctx: ExportContext | None = None) -> dict[str, Any]:
    """The primary STIX 2.1 object of one IOC record: an ``indicator``, or a ``vulnerability`` for a CVE.

    ``ctx`` adds the reporting articles as ``external_references``. Used by the bundle and by TAXII.
    """
    object_type = mapping(ioc.type, "stix", Stix).object_type
    if object_type == "vulnerability":
        created, modified = _dates(ioc)
        return vulnerability_object(ioc.value, created, modified, _external_refs(ioc, ctx), _description(ioc))
    if object_type == "attack-pattern":
        created, modified = _dates(ioc)
        return attack_pattern_object(ioc.value, created, modified)
    return indicator_object(ioc, ctx)


def attack_pattern_object(technique: str, created: str, modified: str) -> dict[str, Any]:
    """An ATT&CK technique as an ``attack-pattern`` (external id under source ``mitre-attack``)."""
    tid = technique.upper()
    ref: dict[str, str] = {"source_name": "mitre-attack", "external_id": tid}
    if tid.startswith("T") and tid[1:].replace(".", "").isdigit():
        ref["url"] = "https://attack.mitre.org/techniques/" + tid.replace(".", "/") + "/"
    return {"type": "attack-pattern", "spec_version": "2.1", "id": attack_pattern_id(tid),
            "created_by_ref": IDENTITY_ID, "created": created, "modified": modified, "name": tid,
            "external_references": [ref]}


def relationship_object(source: str, kind: str, target: str, created: str, modified: str) -> dict[str, Any]:
    return {"type": "relationship", "spec_version": "2.1", "id": relationship_id(source, kind, target),
            "created_by_ref": IDENTITY_ID, "created": created, "modified": modified,
            "relationship_type": kind, "source_ref": source, "target_ref": target}


class _Related:
    """Vulnerabilities and attack-patterns that IOC records mention, with the span of the records' dates."""

    def __init__(self) -> None:
        self.spans: dict[tuple[str, str], tuple[str, str]] = {}  # (kind, key) -> (created, modified)
        # (source, type, target, created, modified): dicts are made only while streaming them out.
        self.relationships: dict[tuple[str, str, str], tuple[str, str]] = {}

    def add(self, kind: str, key: str, created: str, modified: str) -> None:
        old = self.spans.get((kind, key))
        self.spans[(kind, key)] = (min(old[0], created), max(old[1], modified)) if old else (created, modified)

    def collect(self, ioc: Ioc, primary_id: str) -> None:
        created, modified = _dates(ioc)
        # STIX 2.1 defines no indicator-to-vulnerability type, hence related-to (s. 4.7, relationships).
        for cve in dict.fromkeys(c.upper() for c in ioc.cves if c.strip()):
            if vulnerability_id(cve) != primary_id:
                self.add("cve", cve, created, modified)
                self.relationships.setdefault((primary_id, "related-to", vulnerability_id(cve)), (created, modified))
        kind = "indicates" if mapping(ioc.type, "stix", Stix).object_type == "indicator" else "related-to"
        for tid in dict.fromkeys(t.upper() for t in ioc.techniques if t.strip()):
            if attack_pattern_id(tid) != primary_id:
                self.add("technique", tid, created, modified)
                self.relationships.setdefault((primary_id, kind, attack_pattern_id(tid)), (created, modified))

    def objects(self, emitted: set[str]) -> Iterator[dict[str, Any]]:
        for (kind, key), (created, modified) in self.spans.items():
            if kind == "cve" and vulnerability_id(key) not in emitted:
                yield vulnerability_object(key, created, modified)
            elif kind == "technique" and attack_pattern_id(key) not in emitted:
                yield attack_pattern_object(key, created, modified)
        for (source, kind, target), (created, modified) in self.relationships.items():
            yield relationship_object(source, kind, target, created, modified)


def bundle_id(iocs: Sequence[Ioc], ctx: ExportContext) -> str:
    """Deterministic: the same window and records give the same bundle id."""
    return f"bundle--{stable_uuid('bundle', ctx.range_text, ctx.tier, records_digest(iocs))}"


def bundle_objects(iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[dict[str, Any]]:
    """identity, one primary object per IOC (spec order), then mentioned CVEs/techniques and relationships."""
    yield identity_object()
    related = _Related()
    emitted: set[str] = set()
    for ioc in iocs:
        obj = stix_object(ioc, ctx)
        if obj["id"] in emitted:
            continue  # two records for one CVE spelling: one object (duplicate ids are invalid in a bundle)
        emitted.add(obj["id"])
        related.collect(ioc, obj["id"])
        yield obj
    yield from related.objects(emitted)


class StixExporter(Exporter):
    """A STIX 2.1 bundle: ``{"type": "bundle", "id": ..., "objects": [...]}`` streamed in 64 KiB chunks."""

    format_id: ClassVar[str] = "stix"
    media_type: ClassVar[str] = "application/stix+json;version=2.1"
    extension: ClassVar[str] = "stix.json"
    scope: ClassVar[str] = SCOPE_STIX
    summary: ClassVar[str] = "STIX 2.1 bundle"

    def encode(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        return chunked(self._parts(iocs, ctx))

    def _parts(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        # STIX 2.1 bundles carry no spec_version (s. 8: type, id, objects); stix2.parse rejects one.
        yield b'{"type":"bundle","id":' + orjson.dumps(bundle_id(iocs, ctx)) + b',"objects":['
        for n, obj in enumerate(bundle_objects(iocs, ctx)):
            yield (b"," if n else b"") + orjson.dumps(obj)
        yield b"]}"

