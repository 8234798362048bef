"""Pure, immutable query specs. The server parses parameters into these; each backend translates them.

No I/O here: a spec is a value, so parsing and translation are tested by parameters alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from store.decay import STATUSES, clock, score_at
from store.records import parse_stored, severity_label, utcnow

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

    ``since`` bounds ``modified`` (spec: "IOCs added or updated after this time"). ``after`` is the keyset
    position (first_seen, type, value), the list's order. ``added_order`` is the TAXII order instead: records
    by their date_added at ``now`` (``Ioc.date_added``: when the current version came to be, TAXII 2.1
    section 5.4), then type and value; ``added_after`` bounds that date_added and ``after`` is a position in it.
    ``stix_ids`` keeps records whose STIX object id (``Ioc.stix_id``) is any of them, read by index.
    ``sources`` and ``threat_actors`` keep records any of whose reporting feeds or actors is named.

    The lifecycle (store.decay), read at ``now`` (the status clock; None: now): ``statuses`` keeps records of
    any of those statuses (empty: every status), ``min_score`` those scoring at least that much, both
    through the stored ``valid_until`` and ``revoked``. ``status_changes`` makes ``since`` a poll for
    changes: a record whose ``valid_until`` lies in (since, now] expired in the window, a change too, as long
    as its ``modified`` is within ``floor`` (the lookback).
    ``include_warninglisted``: records whose value is on a warninglist (``Ioc.warninglisted``) are left out
    unless it is set, so every list, export and TAXII page agrees by default.
    """

    types: tuple[str, ...] = ()
    confidences: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    industries: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    threat_actors: tuple[str, ...] = ()
    severities: tuple[str, ...] = ()  # severity labels (store.records.SEVERITY_FLOORS) of ``Ioc.severity``
    values: tuple[str, ...] = ()
    value_contains: str | None = None
    stix_ids: tuple[str, ...] = ()
    include_warninglisted: bool = False
    since: datetime | None = None
    added_after: datetime | None = None
    after: tuple[datetime, str, str] | None = None
    added_order: bool = False
    offset: int = 0
    limit: int = 100
    statuses: tuple[str, ...] = ()
    min_score: int | None = None
    status_changes: bool = False
    now: datetime | None = None
    floor: datetime | None = None  # the tier lookback on ``modified``, which a poll's expiries keep to too

    @property
    def lifecycle(self) -> bool:
        """Whether a lifecycle filter applies (the counters do not count by status or score)."""
        return bool(self.statuses and set(self.statuses) != set(STATUSES)) or bool(self.min_score) or (
            self.status_changes and self.since is not None)


def status_clock(q: IocQuery) -> datetime:
    """The time ``q``'s statuses and scores are read at."""
    return q.now if q.now is not None else clock(utcnow())


def added_start(q: IocQuery) -> tuple[datetime, list[tuple[str, str]]] | None:
    """Where a page in date_added order starts, on each arm's date column (store.sqlite.queries.added_arms):
    (date, [(column, value), ...]) for rows after (date, values...) in (date, columns...) order, or None for
    the first row. ``added_after`` alone when the position is not past it, else the position alone; within
    one type (walked on its (type, date, value) index) the position within that type."""
    after, floor = (q.after if q.added_order else None), q.added_after
    if after is None or (floor is not None and after[0] <= floor):
        return None if floor is None else (floor, [])
    at, ioc_type, value = after
    if len(q.types) != 1:
        return at, [("type", ioc_type), ("value", value)]
    if q.types[0] < ioc_type:
        return at, []
    return at, [("value", value if q.types[0] == ioc_type else "")]


# The IOC list's filters by query parameter name (GET /api/v1/iocs): the one table the parser, the export
# requests and saved feeds read, each name setting the IocQuery field of the same meaning.
IOC_FILTER_FIELDS: dict[str, str] = {
    "type": "types", "confidence": "confidences", "category": "categories", "industry": "industries",
    "source": "sources", "threat_actor": "threat_actors", "status": "statuses", "min_score": "min_score",
    "severity": "severities",
}


def _form_status(form: Mapping[str, Any]) -> str:
    """A record's status now, from its API form (``revoked`` and ``valid_until``; store.decay.status)."""
    if form.get("revoked"):
        return "revoked"
    until = form.get("valid_until")
    return "expired" if until and clock(utcnow()) >= parse_stored(until) else "active"


def _form_score(form: Mapping[str, Any]) -> int:
    """A record's score now, from its API form (store.decay.score)."""
    until = form.get("valid_until")
    if form.get("revoked") or not until:
        return 0
    return score_at(str(form.get("type")), parse_stored(until), clock(utcnow()))


# Each list field of IocFilters -> the values a record's API form (``Ioc.to_api``) holds for it: the live stream
# checks a saved feed on the records it delivers with these (``IocFilters.matches``). A new field needs its entry.
FORM_VALUES: dict[str, Callable[[Mapping[str, Any]], list[Any]]] = {
    "types": lambda form: [form.get("type")],
    "confidences": lambda form: [form.get("confidence")],
    "categories": lambda form: [(form.get("source") or {}).get("category")],
    "industries": lambda form: list(form.get("industries") or ()),
    "sources": lambda form: list(form.get("sources") or ()),
    "threat_actors": lambda form: list(form.get("threat_actors") or ()),
    "severities": lambda form: [severity_label(float(form.get("severity") or 0))],
    "statuses": lambda form: [_form_status(form)],
}
# Every list, export, TAXII collection and saved feed shows active indicators unless asked otherwise, so a
# list and an export of the same filters agree; a poll by date (``since``, TAXII ``added_after``) shows
# every change instead, expiries and revocations included.
DEFAULT_STATUSES: tuple[str, ...] = ("active",)


@dataclass(frozen=True, slots=True)
class IocFilters:
    """The record filters of an IOC request, export or saved feed, each any-match, all ANDed.

    ``statuses`` empty means the default (:data:`DEFAULT_STATUSES`, or every status for a poll);
    ``min_score`` None or 0 keeps every score.
    """

    types: tuple[str, ...] = ()
    confidences: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    industries: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    threat_actors: tuple[str, ...] = ()
    severities: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    min_score: int | None = None
    include_warninglisted: bool = False  # a switch, not a list: outside IOC_FILTER_FIELDS

    @classmethod
    def from_params(cls, values: dict[str, list[str]]) -> IocFilters:
        """From lists by parameter name (a saved feed's stored form, already validated)."""
        found: dict[str, Any] = {IOC_FILTER_FIELDS[name]: tuple(v) for name, v in values.items()
                                 if name in IOC_FILTER_FIELDS}
        if "min_score" in found:
            found["min_score"] = int(found["min_score"][0]) if found["min_score"] else None
        return cls(**found)

    def as_params(self) -> dict[str, list[str]]:
        """The lists by parameter name, empty ones left out (what a saved feed stores and shows)."""
        out = {name: list(value) for name, value in self._lists().items() if value}
        if self.min_score:
            out["min_score"] = [str(self.min_score)]
        return out

    def _lists(self) -> dict[str, tuple[str, ...]]:
        return {name: getattr(self, field) for name, field in IOC_FILTER_FIELDS.items() if field != "min_score"}

    def normalised(self) -> list[list[str]]:
        """Every list's values sorted (equal filters in any order give one cache key), then the score and the
        switch."""
        return [*(sorted(v) for v in self._lists().values()), [str(self.min_score or 0)],
                ["include_warninglisted"] if self.include_warninglisted else []]

    @property
    def empty(self) -> bool:
        return not any(self._lists().values()) and not self.min_score and not self.include_warninglisted

    def matches(self, form: Mapping[str, Any]) -> bool:
        """Whether the record whose API form is ``form`` passes every filter (as the store's query would);
        ``include_warninglisted`` is the caller's to apply (the stream leaves listed values out itself)."""
        if self.min_score and _form_score(form) < self.min_score:
            return False
        return all(
            any(v in wanted for v in values(form))
            for name, values in FORM_VALUES.items()
            if (wanted := getattr(self, name))
        )

    def query(self, poll: bool = False, **rest: Any) -> IocQuery:
        """An IocQuery of these filters plus ``rest`` (window, paging, TAXII position, ``now``). ``poll``: the
        caller asked for changes since a date (:data:`DEFAULT_STATUSES`)."""
        chosen = {f.name: getattr(self, f.name) for f in fields(self)}
        chosen["statuses"] = self.statuses or (() if poll else DEFAULT_STATUSES)
        chosen["min_score"] = self.min_score or None
        return IocQuery(**chosen, status_changes=poll, **rest)
