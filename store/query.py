"""Pure, immutable query specs. The server parses parameters into these; each backend translates them.

No I/O here: a spec is a value, so parsing and translation are tested by parameters alone.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

# Spec, GET /api/v1/articles, parameter `sort`: name -> (record field, descending?).
ARTICLE_SORTS: dict[str, tuple[str, bool]] = {
    "published:desc": ("published_at", True),
    "published:asc": ("published_at", False),
    "modified:desc": ("modified_at", True),
    "severity:desc": ("severity_score", True),
    "engagement:desc": ("rank_score", True),
}
TIME_FIELDS: tuple[str, ...] = ("published_at", "fetched_at", "modified_at", "created_at")
TEXT_FIELDS: tuple[str, ...] = ("default", "title", "summary", "ai_summary")
# The most distinct terms (included and excluded) one ``q`` may hold: every term is one more clause.
MAX_Q_TERMS = 32


@dataclass(frozen=True, slots=True)
class TextQuery:
    """Full-text query: every term must match (stemmed, case-insensitive); ``excluded`` must not.

    ``field`` ``default`` searches title and summary through the full-text index; the others scan.
    """

    terms: tuple[str, ...]
    excluded: tuple[str, ...] = ()
    field: str = "default"


@dataclass(frozen=True, slots=True)
class ArticleQuery:
    """Every filter of GET /api/v1/articles, already validated and clamped.

    ``floor`` is the tier lookback on ``published_at``: no article published before it is ever returned,
    whatever the time field, sort or cursor. ``after`` is the keyset position (sort value, id) of the
    last row of the previous page.
    """

    sources: tuple[str, ...] = ()
    source_type: str | None = None
    source_tiers: tuple[int, ...] = ()
    categories: tuple[str, ...] = ()
    content_types: tuple[str, ...] = ()
    tech_tags: tuple[str, ...] = ()
    industry_tags: tuple[str, ...] = ()
    threat_actors: tuple[str, ...] = ()
    min_severity: float | None = None
    severity_labels: tuple[str, ...] = ()
    has_iocs: bool | None = None
    cve_text: str | None = None
    mitre_technique: str | None = None
    has_ai_summary: bool | None = None
    has_audio: bool | None = None
    include_archived: bool = False
    submission_type: str | None = None
    text: TextQuery | None = None
    time_field: str = "published_at"
    since: datetime | None = None
    until: datetime | None = None
    floor: datetime | None = None
    sort: str = "published:desc"
    after: tuple[Any, str] | None = None
    offset: int = 0
    limit: int = 50

    @property
    def sort_field(self) -> str:
        return ARTICLE_SORTS[self.sort][0]

    @property
    def descending(self) -> bool:
        return ARTICLE_SORTS[self.sort][1]


@dataclass(frozen=True, slots=True)
class IocQuery:
    """Filters of GET /api/v1/iocs and the exports; ``since`` is already clamped to the lookback.

    ``since`` bounds ``modified`` (spec: "IOCs added or updated after this time"). ``added_after`` bounds
    ``first_seen`` (TAXII date_added) and ``after`` is the keyset position (first_seen, type, value).
    ``stix_ids`` keeps records whose STIX object id (``Ioc.stix_id``) is any of them, read by index.
    ``sources`` and ``threat_actors`` keep records any of whose reporting feeds or actors is named.
    ``include_warninglisted``: records whose value is on a warninglist (``Ioc.warninglisted``) are left out
    unless it is set, so every list, export and TAXII page agrees by default.
    """

    types: tuple[str, ...] = ()
    confidences: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    industries: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    threat_actors: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    value_contains: str | None = None
    stix_ids: tuple[str, ...] = ()
    include_warninglisted: bool = False
    since: datetime | None = None
    added_after: datetime | None = None
    after: tuple[datetime, str, str] | None = None
    offset: int = 0
    limit: int = 100


# The IOC list's filters by query parameter name (GET /api/v1/iocs): the one table the parser, the export
# requests and saved feeds read, each name setting the IocQuery field of the same meaning.
IOC_FILTER_FIELDS: dict[str, str] = {
    "type": "types", "confidence": "confidences", "category": "categories", "industry": "industries",
    "source": "sources", "threat_actor": "threat_actors",
}


@dataclass(frozen=True, slots=True)
class IocFilters:
    """The record filters of an IOC request, export or saved feed, each any-match, all ANDed.

    Extension point: score and status filters join here (one field each, one entry in
    :data:`IOC_FILTER_FIELDS`, one clause per backend) once the indicator lifecycle computes them.
    """

    types: tuple[str, ...] = ()
    confidences: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    industries: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    threat_actors: tuple[str, ...] = ()
    include_warninglisted: bool = False  # a switch, not a list: outside IOC_FILTER_FIELDS

    @classmethod
    def from_params(cls, values: dict[str, list[str]]) -> IocFilters:
        """From lists by parameter name (a saved feed's stored form, already validated)."""
        lists: dict[str, Any] = {IOC_FILTER_FIELDS[n]: tuple(v) for n, v in values.items() if n in IOC_FILTER_FIELDS}
        return cls(**lists)

    def as_params(self) -> dict[str, list[str]]:
        """The lists by parameter name, empty ones left out (what a saved feed stores and shows)."""
        return {name: list(getattr(self, field)) for name, field in IOC_FILTER_FIELDS.items() if getattr(self, field)}

    def normalised(self) -> list[list[str]]:
        """Every list's values sorted (equal filters in any order give one cache key), then the switch."""
        return [*(sorted(getattr(self, name)) for name in IOC_FILTER_FIELDS.values()),
                ["include_warninglisted"] if self.include_warninglisted else []]

    @property
    def empty(self) -> bool:
        return not any(getattr(self, f.name) for f in fields(self))

    def query(self, **rest: Any) -> IocQuery:
        """An IocQuery of these filters plus ``rest`` (window, paging, TAXII position)."""
        return IocQuery(**{f.name: getattr(self, f.name) for f in fields(self)}, **rest)
