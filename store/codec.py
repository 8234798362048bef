"""Records <-> plain documents, shared by both backends.

Documents keep datetimes as ``datetime`` (MongoDB stores them as BSON dates); the SQLite backend
serialises documents with orjson and reads ISO strings back, which ``_dt`` accepts too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypeVar

from store.records import (
    ApiKey,
    Article,
    ArticleIoc,
    Feed,
    Ioc,
    MitreTechnique,
    Session,
    Source,
    User,
    ms,
    parse_iso,
)

R = TypeVar("R", Article, Ioc, Source, User, ApiKey, Session, Feed)

_DATETIME_FIELDS: dict[type[Any], frozenset[str]] = {
    Article: frozenset({"published_at", "fetched_at", "modified_at", "created_at", "categorized_at"}),
    Ioc: frozenset({"first_seen", "last_seen", "modified"}),
    Source: frozenset({"last_attempt_at", "last_success_at"}),
    Session: frozenset({"created_at", "last_seen_at"}),
    User: frozenset({"created_at"}),
    ApiKey: frozenset({"created_at", "expires_at", "last_used_at", "previous_expires_at"}),
    Feed: frozenset({"created_at", "modified_at"}),
}


def _dt(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return None if value is None else ms(value)
    return parse_iso(str(value))


def to_doc(record: Article | Ioc | Source | User | ApiKey | Session | Feed) -> dict[str, Any]:
    """A plain dict of every field (nested techniques and IOCs as dicts)."""
    doc = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    if isinstance(record, Feed):
        doc["filters"] = {name: list(values) for name, values in record.filters.items()}
    if isinstance(record, Article):
        doc["mitre_techniques"] = [dataclasses.asdict(t) for t in record.mitre_techniques]
        doc["iocs"] = [dataclasses.asdict(i) for i in record.iocs]
    for name in ("tech_tags", "industry_tags", "threat_actors", "cve_ids", "tags", "severity_reasons",
                 "sources", "industries", "article_ids", "cves", "techniques", "scopes"):
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

    ``feed_name`` and ``source_category`` come from ``new`` (the latest report); lists are unioned
    and sorted so merges are order-independent; confidence is recomputed over every reporting source.
    """
    merged = dataclasses.replace(new)
    merged.first_seen = min(old.first_seen, new.first_seen)
    merged.last_seen = max(old.last_seen, new.last_seen)
    merged.modified = max(old.modified, new.modified)
    for name in ("sources", "industries", "article_ids", "cves", "techniques", "threat_actors"):
        setattr(merged, name, sorted(set(getattr(old, name)) | set(getattr(new, name))))
    merged.confidence = merged_confidence(old, new, len(merged.sources))
    return merged


_RANK = {"low": 0, "medium": 1, "high": 2}


def merged_confidence(old: Ioc, new: Ioc, source_count: int) -> str:
    """The stronger of both reports, raised by corroboration: 2 sources medium, 3 or more high,
    and any government source high (confidence from how many and which sources report it)."""
    floor = "high" if source_count >= 3 or "government" in (old.source_category, new.source_category) else (
        "medium" if source_count == 2 else "low")
    return max(old.confidence, new.confidence, floor, key=lambda c: _RANK.get(c, 0))
