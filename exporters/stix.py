"""STIX 2.1 bundles of IOC records, built as plain dicts and encoded with orjson (spec "STIX bundle").

Building through ``stix2`` objects costs about 100 times plain dicts (mostly pattern
re-validation: BENCHMARKS.md), so the request path never touches ``stix2``; the tests
hold these dicts to ``stix2.parse`` and to ``stix2-validator`` in strict mode instead.

A bundle is the ctiwire identity, one primary object per record (spec order), then the context the
records bring (exporters.stix_graph), every object marked TLP:CLEAR. TAXII serves the same primary
objects (:func:`stix_object`) and the same identity and marking (its context collection), so a collection
and an export agree on every id and property.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import orjson

from config.tiers import SCOPE_STIX
from exporters.base import ExportContext, Exporter, chunked, records_digest, stable_uuid
from exporters.caps import (
    ACTORS_PER_RECORD,
    ARTICLES_PER_RECORD,
    CVES_PER_RECORD,
    FAMILIES_PER_ACTOR,
    STIX_BYTES_PER_RECORD,
    STIX_FIXED_BYTES,
    TECHNIQUES_PER_RECORD,
)
from exporters.stix_graph import Graph
from exporters.stix_objects import IDENTITY_ID as IDENTITY_ID
from exporters.stix_objects import TLP_CLEAR_ID as TLP_CLEAR_ID
from exporters.stix_objects import identity_object, stix_object
from exporters.stix_objects import pattern as pattern
from store.records import Ioc
from store.stixids import attack_pattern_id as attack_pattern_id
from store.stixids import vulnerability_id as vulnerability_id

__all__ = ["IDENTITY_ID", "TLP_CLEAR_ID", "StixExporter", "bundle_objects", "identity_object", "pattern", "stix_object"]

BUNDLE_NOTES = (
    f"Objects: the ctiwire identity, one indicator per IOC (a vulnerability for a CVE, an attack-pattern for an "
    f"ATT&CK technique), then what the IOCs' reporting names: a report per cited article (at most "
    f"{ARTICLES_PER_RECORD} per IOC, its most recently published; name, published date, URL and ctiwire article "
    f"id, with the IOCs it brought as object_refs), up to {ACTORS_PER_RECORD} intrusion sets per IOC (MISP galaxy "
    f"names and aliases) with up to {FAMILIES_PER_ACTOR} malware families each, up to {CVES_PER_RECORD} "
    f"vulnerabilities and {TECHNIQUES_PER_RECORD} attack patterns per IOC, and the relationships between them "
    f"(indicates, uses, related-to), and a sighting per indicator that accounts reported seen (POST "
    f"/api/v1/sightings; count: the distinct accounts, where_sighted_refs: the ctiwire identity). Every object "
    f"is marked TLP:CLEAR (the TLP 2.0 marking definition). Each IOC adds at most {STIX_BYTES_PER_RECORD:,} "
    f"bytes (its own object, then what no earlier IOC brought, in that order of priority: sighting, first report, "
    f"actors, vulnerabilities, attack patterns, further reports), so a bundle of N IOCs "
    f"stays within N x {STIX_BYTES_PER_RECORD:,} + {STIX_FIXED_BYTES:,} bytes (limit=100: under 500 KB) "
    f"however many articles, CVEs and techniques stand behind each IOC; the rest is reachable through the "
    f"cited articles (GET /api/v1/articles/{{id}} with a report's external_id)."
)


def bundle_id(iocs: Sequence[Ioc], ctx: ExportContext) -> str:
    """Deterministic: the same window and records give the same bundle id."""
    return f"bundle--{stable_uuid('bundle', ctx.range_text, ctx.tier, records_digest(iocs))}"


def bundle_objects(iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[dict[str, Any]]:
    """identity, one primary object per IOC (spec order), then the marking and the records' context."""
    yield identity_object()
    graph = Graph(ctx)
    emitted: set[str] = set()
    for ioc in iocs:
        obj = stix_object(ioc, ctx)
        if obj["id"] in emitted:
            continue  # two records for one CVE spelling: one object (duplicate ids are invalid in a bundle)
        emitted.add(obj["id"])
        graph.collect(ioc, obj)
        yield obj
    yield from graph.objects(emitted)


class StixExporter(Exporter):
    """A STIX 2.1 bundle: ``{"type": "bundle", "id": ..., "objects": [...]}`` streamed in 64 KiB chunks."""

    format_id: ClassVar[str] = "stix"
    media_type: ClassVar[str] = "application/stix+json;version=2.1"
    extension: ClassVar[str] = "stix.json"
    scope: ClassVar[str] = SCOPE_STIX
    summary: ClassVar[str] = "STIX 2.1 bundle"
    notes: ClassVar[str] = BUNDLE_NOTES

    def encode(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        return chunked(self._parts(iocs, ctx))

    def _parts(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        # STIX 2.1 bundles carry no spec_version (s. 8: type, id, objects); stix2.parse rejects one.
        yield b'{"type":"bundle","id":' + orjson.dumps(bundle_id(iocs, ctx)) + b',"objects":['
        for n, obj in enumerate(bundle_objects(iocs, ctx)):
            yield (b"," if n else b"") + orjson.dumps(obj)
        yield b"]}"
