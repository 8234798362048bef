"""Parsing of the IOC list's parameters, shared by /iocs, /iocs/search and every IOC export."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from config.tiers import Tier
from server.errors import BadRequest, bad_param
from server.openapi_parts import DATE_TIME_PARAM, csv_param, param, per_tier
from server.params import Params, read_cursor
from server.tokens import sign
from server.windows import Window, cap_limit, clamp_since, window_headers
from store.decay import STATUSES, read_time
from store.query import IocFilters, IocQuery
from store.records import CONFIDENCES, INDUSTRY_TAGS, IOC_TYPES, SEVERITY_LABELS, SOURCE_CATEGORIES, iso, parse_stored

# Sector names users send (spec example `financial-services`) folded onto the stored industry tags.
INDUSTRY_ALIASES: dict[str, str] = {
    "financial-services": "finance", "financial": "finance", "banking": "finance", "health": "healthcare",
    "public-sector": "government", "tech": "technology", "telecommunications": "telecom",
    "utilities": "energy", "military": "defense", "logistics": "transportation",
}
DEFAULT_IOC_LIMIT = 100
# meta.total of the IOC list and search: estimated (the default) costs the same at any data size
# (IocStore.estimate_iocs), exact counts every match, none leaves it null.
COUNT_STRATEGIES = ("estimated", "exact", "none")
DEFAULT_COUNT_STRATEGY = "estimated"
# The IOC list's one order (first_seen, type, value) names its cursors: an article cursor is refused here.
CURSOR_KIND = "iocs:first_seen"
Position = tuple[datetime, str, str]  # IocQuery.after


@dataclass(frozen=True, slots=True)
class IocRequest:
    """A parsed IOC request: the store query plus what the response reports about it."""

    query: IocQuery
    window: Window
    limit_capped: bool
    filters: IocFilters = IocFilters()
    count_strategy: str = DEFAULT_COUNT_STRATEGY

    @property
    def headers(self) -> dict[str, str]:
        return window_headers(self.window, self.limit_capped)


def industries(params: Params) -> tuple[str, ...]:
    values = tuple(INDUSTRY_ALIASES.get(v.lower(), v.lower()) for v in params.csv("industry"))
    unknown = [v for v in values if v not in INDUSTRY_TAGS]
    if unknown:
        raise bad_param("industry", f"unknown sector(s) {', '.join(unknown)}; known: {', '.join(INDUSTRY_TAGS)}")
    return values


def ioc_filters(params: Params, types: tuple[str, ...] = IOC_TYPES) -> IocFilters:
    """The record filters (store.query.IOC_FILTER_FIELDS), each a 400 naming it when malformed."""
    return IocFilters(
        types=params.csv("type", types),
        confidences=params.csv("confidence", CONFIDENCES),
        categories=params.csv("category", SOURCE_CATEGORIES),
        industries=industries(params),
        sources=params.csv("source"),
        threat_actors=tuple(dict.fromkeys(v.lower() for v in params.csv("threat_actor"))),
        severities=params.csv("severity", SEVERITY_LABELS),
        **lifecycle_filters(params),
    )


def lifecycle_filters(params: Params) -> dict[str, Any]:
    """``status`` and ``min_score`` as IocFilters fields (README, "Indicator score and lifecycle"), each a 400
    naming it when malformed: read by the IOC list and exports, and by TAXII beside its own filters."""
    return {
        "statuses": tuple(dict.fromkeys(params.csv("status", STATUSES))),
        "min_score": params.integer("min_score", None, minimum=0, maximum=100) or None,
    }


def parse_ioc_request(params: Params, tier: Tier, now: datetime, default_limit: int = DEFAULT_IOC_LIMIT,
                      types: tuple[str, ...] = IOC_TYPES, filters: IocFilters | None = None,
                      secret: str | None = None) -> IocRequest:
    """The IOC list's filters (or a saved feed's ``filters``), since, limit and offset, clamped to ``tier``;
    with the server ``secret``, also the ``cursor`` of a list page (the exports take none)."""
    asked = params.timestamp("since") or params.timestamp("modified_since")
    window = clamp_since(asked, tier.ioc_lookback_days, now)
    limit, capped = cap_limit(params.limit(default_limit), tier.ioc_results_max)
    chosen = ioc_filters(params, types) if filters is None else filters
    chosen = replace(chosen, include_warninglisted=bool(params.flag("include_warninglisted", False)))
    offset = params.integer("offset", 0, minimum=0) or 0
    after = None if secret is None else read_cursor(params, secret, CURSOR_KIND, _position, {})
    if after is not None and offset:
        raise BadRequest(
            "give either 'cursor' or 'offset', not both",
            code="conflicting_parameters",
            details={"parameters": ["cursor", "offset"]},
        )
    # A poll reads at its millisecond (store.decay.read_time): the newest ``modified`` it returns, passed back
    # as ``since``, is then after no expiry it left out.
    poll = asked is not None
    query = chosen.query(poll=poll, since=window.since, offset=offset, limit=limit, after=after,
                         now=read_time(now, poll), floor=window.floor)
    strategy = params.text("count_strategy", DEFAULT_COUNT_STRATEGY, COUNT_STRATEGIES) or DEFAULT_COUNT_STRATEGY
    return IocRequest(query, window, capped, chosen, strategy)


def _position(payload: dict[str, Any]) -> Position:
    return parse_stored(str(payload["f"])), str(payload["t"]), str(payload["v"])


def ioc_cursor(secret: str, position: Position) -> str:
    """The signed cursor of the page after the one whose last record sits at ``position``."""
    first_seen, ioc_type, value = position
    return sign(secret, CURSOR_KIND, {"f": iso(first_seen), "t": ioc_type, "v": value})


SINCE_PARAM = param("since", DATE_TIME_PARAM, f"IOCs added or updated at or after this time; clamped to the tier "
                    f"lookback ({per_tier('ioc_lookback_days', ' days')}).")
INCLUDE_WARNINGLISTED_PARAM = param(
    "include_warninglisted", {"type": "boolean", "default": False},
    "Records whose value is on a MISP warninglist (known-benign values: public resolvers, cloud and CDN "
    "ranges, top sites, documentation ranges) are left out by default; `true` puts them back, each naming its "
    "lists in `warninglists`.")
STATUS_PARAM = csv_param(
    "status", "Lifecycle statuses, comma-separated (README, \"Indicator score and lifecycle\"). Default `active`; "
    "with `since` (a poll for changes) every status: records revoked since then, and records whose `valid_until` "
    "passed since then (their effective `modified` is `valid_until`), come back with their new status.", STATUSES)
MIN_SCORE_PARAM = param("min_score", {"type": "integer", "minimum": 0, "maximum": 100},
                        "Only records whose `score` now is at least this (revoked records score 0).")
# The filters of the IOC list and of every IOC export, documented once (one parser serves them all).
IOC_FILTER_PARAMS = [
    csv_param("type", "IOC types, comma-separated (any-match).", IOC_TYPES),
    csv_param("confidence", "Confidences, comma-separated.", CONFIDENCES),
    csv_param("category", "Source categories, comma-separated.", SOURCE_CATEGORIES),
    csv_param("industry", "Sectors, comma-separated; aliases such as financial-services are folded.", INDUSTRY_TAGS),
    param("source", {"type": "string"}, "Exact reporting feed names (see /api/v1/sources), comma-separated "
          "(any-match on the feeds that reported the record)."),
    param("threat_actor", {"type": "string"}, "Lowercase canonical threat actor names, comma-separated "
          "(any-match on the actors named beside the record)."),
    csv_param("severity", "Severity buckets of the record's `severity` (the highest severity score of the articles "
              "that reported it: critical 9-10, high 7-8.9, medium 4-6.9, low below 4), comma-separated.",
              SEVERITY_LABELS),
    STATUS_PARAM,
    MIN_SCORE_PARAM,
    SINCE_PARAM,
    param("modified_since", DATE_TIME_PARAM, "Alias of `since`."),
    INCLUDE_WARNINGLISTED_PARAM,
]
COUNT_STRATEGY_PARAM = param(
    "count_strategy", {"type": "string", "enum": list(COUNT_STRATEGIES), "default": DEFAULT_COUNT_STRATEGY},
    "meta.total. `estimated` (default) costs the same at any data size: exact for filters on type, confidence, "
    "category and since (read from counters kept per day), otherwise at most 10,000 matches counted "
    "(meta.total_estimated true when it stopped there). `exact` counts every match (slower on large data). "
    "`none`: null, the cheapest.")
