"""GET /api/v1/stream parameters -> one immutable filter, checked before the stream starts.

The stream takes the IOC list's filters (``type``, ``confidence``, ``industry``; server.ioc_params) and the
article filters that make sense for new items (``severity``, ``min_severity``; store.article_filters), plus
``source`` (both kinds), ``category`` (article category slugs and IOC source categories: the two sets
are disjoint, so each value filters the kind it belongs to), ``kinds``, and ``feed``: one of the account's
saved feeds, whose filters the IOC records must pass as well (read once, when the stream opens). A filter
that reads only one kind's fields narrows the default ``kinds`` to that kind: ``type=ipv4`` streams IPv4
records, not every article beside them. Unlike the list endpoints, an unknown parameter is a 400: a stream left open for
days on a misspelt filter would deliver everything, silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from config.tiers import Tier
from server.article_params import GROUPS, read_filter
from server.errors import BadRequest, bad_param
from server.ioc_params import industries
from server.params import Params
from store.article_filters import by_name
from store.event_filter import StreamFilter
from store.ports.events import EVENT_KINDS, EventId
from store.query import IocFilters
from store.records import CATEGORIES, CONFIDENCES, IOC_TYPES, SOURCE_CATEGORIES

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
        "feed",
        "include_warninglisted",
    }
)


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


def parse_stream_filter(
    params: Params, args: Mapping[str, Any], tier: Tier, now: datetime, feed: IocFilters | None = None
) -> StreamFilter:
    """Every filter of the stream, with ``feed`` the filters of the saved feed it names; raises BadRequest
    (400) naming the parameter at fault."""
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
    kinds = _kinds(params, any(v not in (None, ()) for v in article.values()), any(ioc.values()) or feed is not None)
    sources = tuple(read_filter(params, by_name("source")))
    listed = bool(params.flag("include_warninglisted", False))
    return StreamFilter(kinds=kinds, sources=sources, feed=feed, include_warninglisted=listed,
                        **article, **ioc)  # type: ignore[arg-type]


def last_event_id(params: Params, header: str | None) -> EventId | None:
    """Where a resuming client left off: ``Last-Event-ID`` (the SSE reconnection header) or ``last_event_id``."""
    raw, name = (header, "Last-Event-ID") if header else (params.raw("last_event_id"), "last_event_id")
    if raw is None:
        return None
    try:
        return EventId.parse(raw)
    except ValueError as exc:
        raise bad_param(name, "must be an event id as sent in the stream's id lines, such as 1767225600000-0") from exc
