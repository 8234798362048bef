"""The STIX 2.1 objects ctiwire builds, as plain dicts (see exporters.stix for why not ``stix2`` objects).

Every id is a UUIDv5 under the project namespace (store.stixids), so rebuilding an export never changes
an id. Every object but the marking definition carries ``object_marking_refs`` to TLP:CLEAR (TLP 2.0,
the OASIS extension ``extension-definition--60a3c5c5-...``): the data is public reporting.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from exporters.base import ArticleRef, ExportContext, indicator_id
from exporters.caps import SOURCES_NAMED, clip
from store.decay import clock
from store.ioctypes import Stix, mapping
from store.records import Ioc, iso, utcnow
from store.stixids import attack_pattern_id, named_id, stable_uuid, vulnerability_id

# TLP 2.0 in STIX 2.1: the official TLP:CLEAR marking definition, fixed id and date, from the OASIS
# extension definition (cti-stix-common-objects, extension-definition-specifications/tlp-2.0).
TLP_EXTENSION = "extension-definition--60a3c5c5-0d10-413e-aab3-9e08dde9e88d"
TLP_CLEAR_ID = "marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487"
TLP_CLEAR: dict[str, Any] = {
    "type": "marking-definition",
    "spec_version": "2.1",
    "id": TLP_CLEAR_ID,
    "created": "2022-10-01T00:00:00.000Z",
    "name": "TLP:CLEAR",
    "extensions": {TLP_EXTENSION: {"extension_type": "property-extension", "tlp_2_0": "clear"}},
}
MARKINGS = [TLP_CLEAR_ID]

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
    "object_marking_refs": MARKINGS,
}

# STIX 2.1 Appendix A, "None/Low/Med/High" scale: the midpoints of Low, Med and High.
CONFIDENCE_SCORES: dict[str, int] = {"high": 85, "medium": 50, "low": 15}


def identity_object() -> dict[str, Any]:
    """The ctiwire ``identity`` (a fresh copy: callers may add to it)."""
    return dict(IDENTITY)


def _base(stix_type: str, object_id: str, created: str, modified: str) -> dict[str, Any]:
    """The common properties of every object ctiwire creates (STIX 2.1 s. 3.2)."""
    return {
        "type": stix_type,
        "spec_version": "2.1",
        "id": object_id,
        "created_by_ref": IDENTITY_ID,
        "created": created,
        "modified": modified,
        "object_marking_refs": MARKINGS,
    }


def dates(ioc: Ioc) -> tuple[str, str]:
    """created and modified of a record's objects; modified never precedes created (STIX 2.1 s. 3.2)."""
    return iso(ioc.first_seen), iso(max(ioc.modified, ioc.first_seen))


def pattern(ioc: Ioc) -> str:
    """The STIX pattern of one record on its type's object path (STIX 2.1 s. 9, registry ``stix``); only ``\\``
    and ``'`` need escaping in a string literal (s. 9.4)."""
    literal = ioc.value.replace("\\", "\\\\").replace("'", "\\'")
    return f"[{mapping(ioc.type, 'stix', Stix).path} = '{literal}']"


def article_reference(article_id: str, ref: ArticleRef, titled: bool = True) -> dict[str, str]:
    """A cited article: its URL, and its ctiwire id (GET /api/v1/articles/{id} has all it names); its title
    unless ``titled`` is false (a report names it already)."""
    # source_name is required and must be non-empty; an article with a blank feed name is still cited.
    cited = {"source_name": ref.source_name or "ctiwire", "url": ref.url, "external_id": article_id}
    if titled:
        cited["description"] = clip(ref.title)
    return cited


def _external_refs(ioc: Ioc, ctx: ExportContext | None) -> list[dict[str, str]]:
    return [] if ctx is None else [article_reference(a, ctx.articles[a]) for a in ctx.cited(ioc)]


def _labels(ioc: Ioc) -> list[str]:
    # A warninglisted record (exported only when asked for) says so in its labels, an open vocabulary (s. 4.1).
    listed = ["warninglisted"] if ioc.warninglisted else []
    return list(dict.fromkeys([ioc.type, f"confidence-{ioc.confidence}", ioc.source_category, *ioc.industries,
                               *listed]))


def _description(ioc: Ioc) -> str:
    named = ioc.sources[:SOURCES_NAMED]
    more = f" and {len(ioc.sources) - len(named)} more" if len(ioc.sources) > len(named) else ""
    sources = (", ".join(named) + more) or ioc.feed_name
    return (
        f"{ioc.type} {ioc.value} reported by {ioc.feed_name} ({ioc.source_category}); "
        f"confidence {ioc.confidence}; sources: {sources}"
    )


def lifecycle(ioc: Ioc, now: datetime) -> tuple[str, dict[str, Any]]:
    """(modified, lifecycle properties) of an indicator at ``now`` (store.ioctypes.LIFECYCLE_PLACES):
    ``valid_until``, later than ``valid_from`` as STIX 2.1 s. 4.6 requires; ``revoked`` (``modified`` is
    then the revocation). An expired record is a new version whose ``modified`` is its expiry, so
    ``match[version]`` and date pollers see the change."""
    created, modified = dates(ioc)
    until = max(ioc.valid_until, ioc.first_seen + timedelta(seconds=1))
    if ioc.revoked:
        return modified, {"valid_until": iso(until), "revoked": True}
    if ioc.status(now) == "expired":
        modified = max(modified, iso(until))
    return modified, {"valid_until": iso(until)}


def _at(ctx: ExportContext | None) -> datetime:
    """The time an object's lifecycle is read at: the export's as given (a whole second for a file export, the
    request's millisecond for a TAXII page, whose date_added is read at it too), else the status clock now."""
    return ctx.generated_at if ctx is not None else clock(utcnow())


def indicator_object(ioc: Ioc, ctx: ExportContext | None = None) -> dict[str, Any]:
    created, _ = dates(ioc)
    modified, life = lifecycle(ioc, _at(ctx))
    obj = _base("indicator", indicator_id(ioc), created, modified)
    obj.update(life)
    obj.update(
        {
            "name": f"{ioc.type}: {ioc.value}",
            "description": _description(ioc),
            "indicator_types": ["malicious-activity"],
            "pattern": pattern(ioc),
            "pattern_type": "stix",
            "valid_from": created,
            "confidence": CONFIDENCE_SCORES.get(ioc.confidence, 15),
            "labels": _labels(ioc),
        }
    )
    refs = _external_refs(ioc, ctx)
    if refs:
        obj["external_references"] = refs
    return obj


def vulnerability_object(
    cve: str,
    created: str,
    modified: str,
    extra_refs: list[dict[str, str]] | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    """A CVE as a ``vulnerability`` (STIX 2.1 s. 4.19: external id ``CVE-...`` under source ``cve``)."""
    obj = _base("vulnerability", vulnerability_id(cve), created, modified)
    obj["name"] = cve.upper()
    obj["external_references"] = [{"source_name": "cve", "external_id": cve.upper()}, *(extra_refs or [])]
    if description:
        obj["description"] = description
    return obj


def attack_pattern_object(technique: str, created: str, modified: str) -> dict[str, Any]:
    """An ATT&CK technique as an ``attack-pattern`` (external id under source ``mitre-attack``)."""
    tid = technique.upper()
    ref: dict[str, str] = {"source_name": "mitre-attack", "external_id": tid}
    if tid.startswith("T") and tid[1:].replace(".", "").isdigit():
        ref["url"] = "https://attack.mitre.org/techniques/" + tid.replace(".", "/") + "/"
    obj = _base("attack-pattern", attack_pattern_id(tid), created, modified)
    obj.update({"name": tid, "external_references": [ref]})
    return obj


def intrusion_set_object(canonical: str, name: str, aliases: list[str], created: str, modified: str) -> dict[str, Any]:
    """A threat actor as an ``intrusion-set`` (STIX 2.1 s. 4.8), named as the MISP galaxy spells it."""
    obj = _base("intrusion-set", named_id("intrusion-set", canonical), created, modified)
    obj["name"] = name
    if aliases:
        obj["aliases"] = aliases
    return obj


def malware_object(family: str, created: str, modified: str) -> dict[str, Any]:
    """A malware family (STIX 2.1 s. 4.11: ``is_family`` true, so ``name`` is required)."""
    obj = _base("malware", named_id("malware", family), created, modified)
    obj.update({"name": family, "is_family": True})
    return obj


def sponsor_object(sponsor: str, created: str, modified: str) -> dict[str, Any]:
    """The state an intrusion set is attributed to, as a ``threat-actor`` (STIX 2.1 s. 4.17) of type
    ``nation-state`` (threat-actor-type-ov): the target of an ``attributed-to`` relationship."""
    obj = _base("threat-actor", named_id("threat-actor", sponsor), created, modified)
    obj.update({"name": sponsor, "threat_actor_types": ["nation-state"]})
    return obj


def report_object(article_id: str, ref: ArticleRef, object_refs: list[str], fallback: str) -> dict[str, Any]:
    """One article as a ``report`` (STIX 2.1 s. 4.14) of the objects it brought; ``fallback`` dates it when
    its publication date is unknown."""
    published = iso(ref.published) if ref.published else fallback
    obj = _base("report", named_id("report", article_id), published, published)
    obj.update(
        {
            "name": clip(ref.title) or ref.url,
            "report_types": ["threat-report"],
            "published": published,
            "object_refs": object_refs,
            "external_references": [article_reference(article_id, ref, titled=False)],
        }
    )
    return obj


def relationship_object(source: str, kind: str, target: str, created: str, modified: str) -> dict[str, Any]:
    obj = _base("relationship", named_id("relationship", f"{source}:{kind}:{target}"), created, modified)
    obj.update({"relationship_type": kind, "source_ref": source, "target_ref": target})
    return obj


def sighting_object(ioc: Ioc, indicator: str) -> dict[str, Any]:
    """STIX 2.1 s. 5.3 ``sighting`` of a record's indicator: ``count`` is how many distinct accounts reported
    the value seen (POST /api/v1/sightings), reported to and relayed by ctiwire (``where_sighted_refs``).
    Its id follows the indicator's, so each build names the same sighting; ``modified`` moves with the count."""
    created, modified = dates(ioc)
    obj = _base("sighting", named_id("sighting", indicator), created, modified)
    obj.update({"sighting_of_ref": indicator, "count": ioc.sightings, "where_sighted_refs": [IDENTITY_ID]})
    return obj


def stix_object(ioc: Ioc, ctx: ExportContext | None = None) -> dict[str, Any]:
    """The primary STIX 2.1 object of one IOC record: an ``indicator``, or a ``vulnerability`` for a CVE.

    ``ctx`` adds the cited articles as ``external_references``. Used by the bundle and by TAXII.
    """
    object_type = mapping(ioc.type, "stix", Stix).object_type
    # A vulnerability or attack pattern carries no validity, but its record's expiry is a new version all the
    # same: its modified is the indicator's, the version TAXII lists with the record's date_added (section 5.4).
    created, _ = dates(ioc)
    modified, _ = lifecycle(ioc, _at(ctx))
    if object_type == "vulnerability":
        return vulnerability_object(ioc.value, created, modified, _external_refs(ioc, ctx), _description(ioc))
    if object_type == "attack-pattern":
        return attack_pattern_object(ioc.value, created, modified)
    return indicator_object(ioc, ctx)
