"""GET /api/v1/stream parameters -> one immutable filter, checked before the stream starts.

The stream takes the IOC list's filters (``type``, ``confidence``, ``industry``; server.ioc_params) and the
article filters that make sense for new items (``severity``, ``min_severity``; store.article_filters), plus
``source`` (both kinds), ``category`` (article category slugs and IOC source categories: the two sets
are disjoint, so each value filters the kind it belongs to) and ``kinds``. A filter that reads only one
kind's fields narrows the default ``kinds`` to that kind: ``type=ipv4`` streams IPv4 records, not every
article beside them. Unlike the list endpoints, an unknown parameter is a 400: a stream left open for
days on a misspelt filter would deliver everything, silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from config.tiers import Tier
from server.article_params import GROUPS, read_filter
from server.errors import BadRequest, bad_param
from server.ioc_params import industries
from server.params import Params
from store.article_filters import by_name
from store.ports.events import EVENT_KINDS, EventId
from store.records import CATEGORIES, CONFIDENCES, IOC_TYPES, SEVERITY_FLOORS, SOURCE_CATEGORIES

IOC_KINDS = ("ioc", "ioc-revoked")
CATEGORY_VALUES = (*CATEGORIES, *SOURCE_CATEGORIES)
# Every parameter the stream reads; ``api_key`` is the discouraged key transport (spec, Authentication 3).
KNOWN_PARAMETERS = frozenset(
    {
        "kinds",
        "last_event_id",
        "duration",
        "api_key",
        "type",
        "confidence",
        "industry",
        "source",
        "category",
        "severity",
        "min_severity",
    }
)


@dataclass(frozen=True, slots=True)
class StreamFilter:
    """Which events one stream delivers; an empty tuple (or None) filters nothing."""

    kinds: tuple[str, ...] = EVENT_KINDS
    sources: tuple[str, ...] = ()
    article_categories: tuple[str, ...] = ()
    severity_labels: tuple[str, ...] = ()
    min_severity: float | None = None
    types: tuple[str, ...] = ()
    confidences: tuple[str, ...] = ()
    source_categories: tuple[str, ...] = ()
    industries: tuple[str, ...] = ()

    def matches(self, kind: str, data: Mapping[str, Any]) -> bool:
        if kind not in self.kinds:
            return False
        return self._article(data) if kind == "article" else self._ioc(data)

    def _article(self, a: Mapping[str, Any]) -> bool:
        return (
            _within(self.sources, a.get("source_name"))
            and _within(self.article_categories, a.get("category"))
            and _within(self.severity_labels, _label(a.get("severity_score")))
            and (self.min_severity is None or float(a.get("severity_score") or 0) >= self.min_severity)
        )

    def _ioc(self, i: Mapping[str, Any]) -> bool:
        source = i.get("source") or {}
        return (
            _within(self.types, i.get("type"))
            and _within(self.confidences, i.get("confidence"))
            and _within(self.source_categories, source.get("category"))
            and _overlaps(self.industries, i.get("industries"))
            and _overlaps(self.sources, i.get("sources"))
        )


def _within(allowed: tuple[str, ...], value: Any) -> bool:
    return not allowed or value in allowed


def _overlaps(allowed: tuple[str, ...], values: Sequence[str] | None) -> bool:
    return not allowed or any(v in allowed for v in values or ())


def _label(score: Any) -> str:
    """The severity bucket of a score (spec, Severity buckets), as the article filter reads it."""
    value = float(score or 0)
    return next(label for label, floor in SEVERITY_FLOORS if value >= floor)


def _refuse_unknown(args: Mapping[str, Any]) -> None:
    unknown = sorted(set(args) - KNOWN_PARAMETERS)
    if unknown:
        raise BadRequest(
            f"unknown parameter(s) {', '.join(unknown)}; the stream accepts "
            f"{', '.join(sorted(KNOWN_PARAMETERS - {'api_key'}))}",
            code="unknown_parameter",
            details={"parameters": unknown},
        )


def _kinds(params: Params, article_only: bool, ioc_only: bool) -> tuple[str, ...]:
    chosen = params.csv("kinds", EVENT_KINDS)
    if chosen:
        return chosen
    if article_only and not ioc_only:
        return ("article",)
    if ioc_only and not article_only:
        return IOC_KINDS
    return EVENT_KINDS


def parse_stream_filter(params: Params, args: Mapping[str, Any], tier: Tier, now: datetime) -> StreamFilter:
    """Every filter of the stream; raises BadRequest (400) naming the parameter at fault."""
    _refuse_unknown(args)
    categories = params.csv("category", CATEGORY_VALUES)
    severity = GROUPS["severity"](params, tier, now)
    ioc = {
        "types": params.csv("type", IOC_TYPES),
        "confidences": params.csv("confidence", CONFIDENCES),
        "source_categories": tuple(c for c in categories if c in SOURCE_CATEGORIES),
        "industries": industries(params),
    }
    article = {
        "article_categories": tuple(c for c in categories if c in CATEGORIES),
        "severity_labels": severity["severity_labels"],
        "min_severity": severity["min_severity"],
    }
    kinds = _kinds(params, any(v not in (None, ()) for v in article.values()), any(ioc.values()))
    sources = tuple(read_filter(params, by_name("source")))
    return StreamFilter(kinds=kinds, sources=sources, **article, **ioc)  # type: ignore[arg-type]


def last_event_id(params: Params, header: str | None) -> EventId | None:
    """Where a resuming client left off: ``Last-Event-ID`` (the SSE reconnection header) or ``last_event_id``."""
    raw, name = (header, "Last-Event-ID") if header else (params.raw("last_event_id"), "last_event_id")
    if raw is None:
        return None
    try:
        return EventId.parse(raw)
    except ValueError as exc:
        raise bad_param(name, "must be an event id as sent in the stream's id lines, such as 1767225600000-0") from exc
