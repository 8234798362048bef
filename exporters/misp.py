"""MISP events of IOC records, as plain dicts encoded with orjson (spec "MISP event").

The event has the spec's shape (``Event`` with ``uuid``, ``info``, ``threat_level_id``, ``analysis``,
``distribution``, ``Attribute``) and nothing PyMISP's strict ``data/schema.json`` forbids. Attribute types
and categories follow the spec's mapping table and MISP's ``describeTypes.json`` category/type matrix, so
``MISPAttribute(strict=True)`` accepts every attribute; the tests hold both to that. PyMISP objects are
not used to build: they would cost far more than dicts for 10,000 attributes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, ClassVar

import orjson

from config.tiers import SCOPE_MISP
from exporters.base import PRODUCT, ExportContext, Exporter, chunked, records_digest, stable_uuid
from store import decay
from store.ioctypes import Misp, mapping
from store.records import Ioc, iso

# MISP threat levels: 1 High, 2 Medium, 3 Low, 4 Undefined; the event takes its strongest indicator's.
THREAT_LEVELS: dict[str, str] = {"high": "1", "medium": "2", "low": "3"}
ANALYSIS_COMPLETED = "2"
DISTRIBUTION_ORG_ONLY = "0"  # the subscriber decides how far to share what it imports
ORG = {"name": PRODUCT, "uuid": stable_uuid("misp-org", PRODUCT)}


def _epoch(dt: datetime) -> str:
    return str(int(dt.timestamp()))


def to_ids(ioc: Ioc) -> bool:
    """Detection-ready: network and hash indicators only (a sender or a CVE is context, not a match)."""
    return mapping(ioc.type, "misp", Misp).to_ids


def event_uuid(iocs: Sequence[Ioc], ctx: ExportContext) -> str:
    """Deterministic: the same window, tier and records give the same event uuid."""
    return stable_uuid("misp-event", ctx.range_text, ctx.tier, records_digest(iocs))


def _comment(ioc: Ioc) -> str:
    sources = ", ".join(ioc.sources) or ioc.feed_name
    return f"{ioc.feed_name} ({ioc.source_category}); confidence {ioc.confidence}; sources: {sources}"


def _tags(ioc: Ioc) -> list[dict[str, str]]:
    """MISP machine tags (namespace:predicate="value"); ATT&CK ids as misp-galaxy-free plain tags."""
    names = [f'{PRODUCT}:confidence="{ioc.confidence}"', f'{PRODUCT}:source-category="{ioc.source_category}"']
    names += [f'{PRODUCT}:attack-technique="{t}"' for t in ioc.techniques if t.strip()]
    names += [f'{PRODUCT}:warninglist="{w}"' for w in ioc.warninglists]
    return [{"name": name} for name in dict.fromkeys(names)]


def lifecycle_tags(ioc: Ioc, now: datetime) -> list[dict[str, str]]:
    """The score at ``now`` as MISP names it (``decay_score``), the status and ``valid_until``, as machine
    tags: MISP's event schema (format 2.4, PyMISP's schema.json) admits no ``decay_score`` key on an
    attribute, so an import that validates keeps them this way (store.ioctypes.LIFECYCLE_PLACES)."""
    return [{"name": f'{PRODUCT}:decay-score="{decay.score(ioc, now)}"'},
            {"name": f'{PRODUCT}:status="{ioc.status(now)}"'},
            {"name": f'{PRODUCT}:valid-until="{iso(ioc.valid_until)}"'}]


def attribute(ioc: Ioc, event: str, now: datetime) -> dict[str, Any]:
    """One MISP attribute; its uuid is stable per (event, type, value). ``to_ids`` false once the record
    expired or was revoked at ``now``: no longer detection-ready (store.ioctypes.LIFECYCLE_PLACES)."""
    # Spec, "MISP event": the type's attribute type and category come from the registry (store.ioctypes).
    misp = mapping(ioc.type, "misp", Misp)
    return {
        "uuid": stable_uuid("misp-attribute", event, ioc.type, ioc.value),
        "type": misp.type, "category": misp.category, "value": ioc.value,
        # A warninglisted value (exported only when asked for) is no detection signature, as MISP treats it.
        "to_ids": misp.to_ids and ioc.status(now) == "active" and not ioc.warninglisted,
        "timestamp": _epoch(ioc.modified), "comment": _comment(ioc), "disable_correlation": False,
        "Tag": _tags(ioc) + lifecycle_tags(ioc, now),
    }


def event_header(iocs: Sequence[Ioc], ctx: ExportContext) -> dict[str, Any]:
    """The event without its attributes (they are streamed after it)."""
    levels = [THREAT_LEVELS.get(i.confidence, "4") for i in iocs]
    return {
        "uuid": event_uuid(iocs, ctx),
        "info": f"{PRODUCT} IOCs ({ctx.tier}) first seen or updated from {ctx.range_text}",
        "date": ctx.until.date().isoformat(),
        "timestamp": _epoch(ctx.generated_at),
        "threat_level_id": min(levels, default="4"),
        "analysis": ANALYSIS_COMPLETED,
        "distribution": DISTRIBUTION_ORG_ONLY,
        "published": False,
        "Orgc": ORG,
        "Tag": [{"name": "tlp:clear"}],  # aggregated from public reporting
    }


def unique(iocs: Sequence[Ioc]) -> Iterator[Ioc]:
    """Drop repeats of one (attribute type, value): the schema wants unique attributes, MISP one per value."""
    seen: set[tuple[str, str]] = set()
    for ioc in iocs:
        key = (mapping(ioc.type, "misp", Misp).type, ioc.value)
        if key not in seen:
            seen.add(key)
            yield ioc


class MispExporter(Exporter):
    """One MISP event (``{"Event": {..., "Attribute": [...]}}``), attributes streamed in 64 KiB chunks."""

    format_id: ClassVar[str] = "misp"
    media_type: ClassVar[str] = "application/json"
    extension: ClassVar[str] = "misp.json"
    scope: ClassVar[str] = SCOPE_MISP
    summary: ClassVar[str] = "MISP event"

    def encode(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        return chunked(self._parts(iocs, ctx))

    def _parts(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        header = event_header(iocs, ctx)
        event, now = header["uuid"], decay.clock(ctx.generated_at)
        # Splice the attribute array into the header's object: `{"Event":{...,"Attribute":[` ... `]}}`.
        yield b'{"Event":' + orjson.dumps(header)[:-1] + b',"Attribute":['
        for n, ioc in enumerate(unique(iocs)):
            yield (b"," if n else b"") + orjson.dumps(attribute(ioc, event, now))
        yield b"]}}"
