"""Records <-> plain documents, shared by both backends.

Documents keep datetimes as ``datetime`` (MongoDB stores them as BSON dates); the SQLite backend
serialises documents with orjson and reads ISO strings back, which ``_dt`` accepts too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypeVar

from store.ports.webhooks import Delivery, Webhook
from store.records import (
    LINK_FIELDS,
    RECENT_LINKS,
    ApiKey,
    Article,
    ArticleIoc,
    Feed,
    Ioc,
    MitreTechnique,
    Session,
    Sighting,
    Source,
    User,
    iso,
    ms,
    parse_iso,
)

R = TypeVar("R", Article, Ioc, Source, User, ApiKey, Session, Feed, Webhook, Delivery, Sighting)

_DATETIME_FIELDS: dict[type[Any], frozenset[str]] = {
    Article: frozenset({"published_at", "fetched_at", "modified_at", "created_at", "categorized_at"}),
    Ioc: frozenset({"first_seen", "last_seen", "modified", "revoked_at"}),
    Source: frozenset({"last_attempt_at", "last_success_at"}),
    Session: frozenset({"created_at", "last_seen_at"}),
    User: frozenset({"created_at"}),
    ApiKey: frozenset({"created_at", "expires_at", "last_used_at", "previous_expires_at"}),
    Feed: frozenset({"created_at", "modified_at"}),
    Webhook: frozenset({"created_at", "next_attempt"}),
    Delivery: frozenset({"at"}),
    Sighting: frozenset({"observed_at", "created_at"}),
}


def _dt(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return None if value is None else ms(value)
    return parse_iso(str(value))


def to_doc(record: Article | Ioc | Source | User | ApiKey | Session | Feed | Webhook | Delivery | Sighting
           ) -> dict[str, Any]:
    """A plain dict of every field (nested techniques and IOCs as dicts)."""
    doc = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    if isinstance(record, Feed):
        doc["filters"] = {name: list(values) for name, values in record.filters.items()}
    if isinstance(record, Article):
        doc["mitre_techniques"] = [dataclasses.asdict(t) for t in record.mitre_techniques]
        doc["iocs"] = [dataclasses.asdict(i) for i in record.iocs]
    if isinstance(record, Ioc):
        doc["link_seen"] = dict(record.link_seen)
    for name in ("tech_tags", "industry_tags", "threat_actors", "cve_ids", "tags", "severity_reasons",
                 "sources", "industries", "article_ids", "cves", "techniques", "scopes", "warninglists"):
        if name in doc:
            doc[name] = list(doc[name])
    return doc


def from_doc(kind: type[R], doc: dict[str, Any]) -> R:
    """Rebuild a record of ``kind``; unknown keys (``_id``, backend columns) are ignored."""
    names = {f.name for f in dataclasses.fields(kind)}
    values = {k: v for k, v in doc.items() if k in names}
    for name in _DATETIME_FIELDS[kind] & values.keys():
        values[name] = _dt(values[name])
    if kind is Article:
        values["mitre_techniques"] = [MitreTechnique(**t) for t in values.get("mitre_techniques", [])]
        values["iocs"] = [ArticleIoc(**i) for i in values.get("iocs", [])]
    return kind(**values)


def fold_iocs(incoming: Iterable[Ioc]) -> dict[tuple[str, str], Ioc]:
    """One record per (type, value), later reports merged into earlier ones (as a row-by-row upsert)."""
    folded: dict[tuple[str, str], Ioc] = {}
    for ioc in incoming:
        key = (ioc.type, ioc.value)
        folded[key] = ioc if key not in folded else merge_ioc(folded[key], ioc)
    return folded


def merge_ioc(old: Ioc, new: Ioc) -> Ioc:
    """Merge a stored record with an incoming one (IocStore.upsert_iocs): first_seen never moves later.

    ``feed_name``, ``source_category`` and ``warninglists`` come from ``new`` (the latest report: its
    lists were checked with the lists this process holds, which a recheck keeps stored records at); lists are unioned
    and sorted so merges are order-independent; confidence is recomputed over every reporting source.
    The linked lists are unioned as given (a stored record holds at most ``RECENT_LINKS`` of each, an
    incoming one what its batch reported); ``bounded`` keeps the most recent few before a store writes.
    Their counts assume the links a record does not list are distinct: a store that knows which links
    are new (its link relation) sets them exactly with ``counted``.
    """
    merged = dataclasses.replace(new)
    merged.first_seen = min(old.first_seen, new.first_seen)
    merged.last_seen = max(old.last_seen, new.last_seen)
    merged.modified = max(old.modified, new.modified)
    merged.severity = max(old.severity, new.severity)
    for name in ("sources", "industries", "threat_actors"):
        setattr(merged, name, sorted(set(getattr(old, name)) | set(getattr(new, name))))
    seen = link_times(old)
    for ref, at in link_times(new).items():
        seen[ref] = max(at, seen.get(ref, at))
    for name, (_, count) in LINK_FIELDS.items():
        union = sorted(set(getattr(old, name)) | set(getattr(new, name)))
        unlisted = sum(getattr(r, count) - len(getattr(r, name)) for r in (old, new))
        setattr(merged, name, union)
        setattr(merged, count, len(union) + unlisted)
    modified = iso(merged.modified)
    merged.link_seen = {ref: at for ref, at in sorted(seen.items()) if at != modified}
    merged.confidence = merged_confidence(old, new, len(merged.sources))
    _merge_lifecycle(merged, old, new)
    return merged


def _merge_lifecycle(merged: Ioc, old: Ioc, new: Ioc) -> None:
    """A revocation sticks through later reports (an operator's or the accounts' verdict on the value,
    not the feeds'), the earliest one when both were revoked (merges commute); sighting counts only grow
    (reports carry none of their own)."""
    revokers = [r for r in (old, new) if r.revoked]
    first = min(revokers, key=lambda r: (r.revoked_at or r.modified, r.revoked_reason)) if revokers else new
    merged.revoked, merged.revoked_at, merged.revoked_reason = first.revoked, first.revoked_at, first.revoked_reason
    merged.sightings = max(old.sightings, new.sightings)
    merged.false_positives = max(old.false_positives, new.false_positives)


def revoked(ioc: Ioc, reason: str, at: datetime) -> Ioc:
    """``ioc`` revoked at ``at`` for ``reason`` (IocStore.revoke_ioc): a change pollers must see, so
    ``modified`` becomes ``at``; its links keep the times they were reported at. Unchanged when it was
    revoked already (the first verdict stands)."""
    if ioc.revoked:
        return ioc
    return changed_at(ioc, at, revoked=True, revoked_at=ms(at), revoked_reason=reason)


def with_sighting_counts(ioc: Ioc, sightings: int, false_positives: int, at: datetime) -> Ioc:
    """``ioc`` with the accounts' report counts (POST /api/v1/sightings) as of ``at``."""
    return changed_at(ioc, at, sightings=sightings, false_positives=false_positives)


def changed_at(ioc: Ioc, at: datetime, **fields: Any) -> Ioc:
    """``ioc`` with ``fields`` changed at ``at``: a change pollers must see, so ``modified`` moves to ``at``
    (never back); its links keep the times they were reported at (``link_times``)."""
    out = dataclasses.replace(ioc, **fields, modified=max(ioc.modified, ms(at)))
    modified = iso(out.modified)
    out.link_seen = {ref: seen for ref, seen in sorted(link_times(ioc).items()) if seen != modified}
    return out


def link_times(ioc: Ioc) -> dict[str, str]:
    """When each listed article, CVE and technique of ``ioc`` was last reported (ISO text)."""
    modified = iso(ioc.modified)
    return {ref: ioc.link_seen.get(ref, modified) for name in LINK_FIELDS for ref in getattr(ioc, name)}


def ioc_links(ioc: Ioc) -> list[tuple[str, str, str]]:
    """(kind, ref, seen) of every link ``ioc`` lists: the rows a store adds to its link relation."""
    seen = link_times(ioc)
    return [(kind, ref, seen[ref]) for name, (kind, _) in LINK_FIELDS.items() for ref in getattr(ioc, name)]


def bounded(ioc: Ioc, keep: int = RECENT_LINKS) -> Ioc:
    """``ioc`` listing at most ``keep`` of each linked kind: the most recently reported (ties: the greater
    id), listed sorted. The top few of a union are the top few of the parts' top few, so bounding after
    every merge gives the same record in any merge order."""
    seen = link_times(ioc)
    out = dataclasses.replace(ioc)
    for name in LINK_FIELDS:
        setattr(out, name, sorted(sorted(getattr(ioc, name), key=lambda r: (seen[r], r), reverse=True)[:keep]))
    kept = {ref for name in LINK_FIELDS for ref in getattr(out, name)}
    out.link_seen = {ref: at for ref, at in ioc.link_seen.items() if ref in kept}
    return out


def counted(ioc: Ioc, held: Ioc | None, added: dict[str, int]) -> Ioc:
    """``ioc`` with exact link counts: ``held``'s (the stored record's) plus the links ``added`` (kind ->
    how many the relation did not hold before this write)."""
    out = dataclasses.replace(ioc)
    for kind, count in LINK_FIELDS.values():
        setattr(out, count, (getattr(held, count) if held is not None else 0) + added.get(kind, 0))
    return out


_RANK = {"low": 0, "medium": 1, "high": 2}


def merged_confidence(old: Ioc, new: Ioc, source_count: int) -> str:
    """The stronger of both reports, raised by corroboration: 2 sources medium, 3 or more high,
    and any government source high (confidence from how many and which sources report it)."""
    floor = "high" if source_count >= 3 or "government" in (old.source_category, new.source_category) else (
        "medium" if source_count == 2 else "low")
    return max(old.confidence, new.confidence, floor, key=lambda c: _RANK.get(c, 0))
