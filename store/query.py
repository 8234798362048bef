"""Pure, immutable query specs. The server parses parameters into these; each backend translates them.

No I/O here: a spec is a value, so parsing and translation are tested by parameters alone.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    """

    types: tuple[str, ...] = ()
    confidences: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    industries: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    value_contains: str | None = None
    stix_ids: tuple[str, ...] = ()
    since: datetime | None = None
    added_after: datetime | None = None
    after: tuple[datetime, str, str] | None = None
    offset: int = 0
    limit: int = 100
