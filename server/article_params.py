"""GET /api/v1/articles parameters -> one immutable request (spec, GET /api/v1/articles).

Pure: every rule of the spec's parameter table is checked here, before a byte of body is sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from config.tiers import Tier
from exporters.articles import EXPANSIONS
from server.errors import BadRequest, bad_param
from server.params import Params, read_cursor
from server.tokens import sign
from server.windows import Window, cap_limit, clamp_since, window_headers
from store import article_filters
from store.article_filters import ArticleFilter, by_name, is_set
from store.query import ARTICLE_SORTS, MAX_Q_TERMS, TIME_FIELDS, ArticleQuery, TextQuery
from store.records import iso, parse_iso

FORMATS = ("json", "ndjson", "csv")
COUNT_STRATEGIES = ("none", "planned", "exact")
MAX_OFFSET = 1000
CLOCK_SKEW = timedelta(seconds=5)
_Q_KEEP = re.compile(r"[^0-9A-Za-z .,\-]")
# Deprecated `cve` alias (spec, Versioning 3): RFC 9745 Deprecation and RFC 8594 Sunset headers.
DEPRECATION_HEADERS = {"Deprecation": "@1767225600", "Sunset": "Wed, 30 Jun 2027 00:00:00 GMT",
                       "Link": '</api/openapi.json>; rel="deprecation"'}


@dataclass(frozen=True, slots=True)
class ArticleRequest:
    """A validated article request: the store query plus how to render it."""

    query: ArticleQuery
    fmt: str
    fields: tuple[str, ...]
    expand: tuple[str, ...]
    count_strategy: str
    filters: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def parse_q(raw: str | None, q_field: str) -> TextQuery | None:
    """Spec rule for ``q``: keep alphanumerics, spaces, ``.``, ``,``, ``-``; then at least 2 characters and
    one alphabetic token of 3+ letters, else ``q_invalid``. ``-term`` excludes a term."""
    if raw is None:
        return None
    clean = _Q_KEEP.sub("", raw).strip()
    tokens = [t.strip(".,") for t in re.split(r"[\s,]+", clean) if t.strip(".,-")]
    if len(clean) < 2 or not any(len(t.lstrip("-")) >= 3 and t.lstrip("-").isalpha() for t in tokens):
        raise BadRequest("q needs at least 2 characters and one alphabetic word of 3 or more letters "
                         "(only letters, digits, spaces, '.', ',' and '-' are kept)", code="q_invalid",
                         details={"parameter": "q", "sanitized": clean})
    terms = tuple(dict.fromkeys(t.lower() for t in tokens if not t.startswith("-")))  # a repeated term once
    excluded = tuple(dict.fromkeys(t[1:].lower() for t in tokens if t.startswith("-") and len(t) > 1))
    if len(terms) + len(excluded) > MAX_Q_TERMS:  # a query error, never "SQLite: tree too large"
        raise BadRequest(f"q has more than {MAX_Q_TERMS} distinct terms", code="q_invalid",
                         details={"parameter": "q", "max_terms": MAX_Q_TERMS})
    if not terms:
        raise BadRequest("q needs at least one term that is not excluded", code="q_invalid",
                         details={"parameter": "q"})
    return TextQuery(terms, excluded, q_field)


def read_filter(params: Params, entry: ArticleFilter) -> Any:
    """One parameter of the filter table, read by its kind (None or ``()`` when absent)."""
    name = entry.name
    if entry.kind == "csv":
        return tuple(map(entry.convert or str, params.csv(name, entry.values or None)))
    if entry.kind == "choice":
        return params.text(name, entry.default, entry.values)
    if entry.kind == "flag":
        return params.flag(name, entry.default)
    if entry.kind == "number":
        return params.number(name, *entry.bounds)
    if entry.kind == "date-time":
        return params.timestamp(name)
    value = params.raw(name)
    if value is not None and entry.pattern is not None:
        value = value.upper()
        if not entry.pattern.match(value):
            raise bad_param(name, entry.rule)
    return value


# The parameter table's groups: parameters read together because one limits or replaces another.
WINDOW = "window"  # the time group's extra key, not a field: the clamped window, for the response headers
Group = Callable[[Params, Tier, datetime], dict[str, Any]]


def _severity(params: Params, tier: Tier, now: datetime) -> dict[str, Any]:
    minimum, labels = read_filter(params, by_name("min_severity")), read_filter(params, by_name("severity"))
    if minimum is not None and labels:
        raise BadRequest("give either 'severity' or 'min_severity', not both", code="conflicting_parameters",
                         details={"parameters": ["severity", "min_severity"]})
    return {"min_severity": minimum, "severity_labels": labels}


def uses_cve_alias(params: Params) -> bool:
    """Whether the deprecated ``cve`` alias is what is read: only without ``cve_text_search``."""
    return params.has("cve") and not params.has("cve_text_search")


def _cve(params: Params, tier: Tier, now: datetime) -> dict[str, Any]:
    return {"cve_text": read_filter(params, by_name("cve" if uses_cve_alias(params) else "cve_text_search"))}


def _text(params: Params, tier: Tier, now: datetime) -> dict[str, Any]:
    return {"text": parse_q(read_filter(params, by_name("q")), read_filter(params, by_name("q_field")))}


def _time(params: Params, tier: Tier, now: datetime) -> dict[str, Any]:
    time_field = read_filter(params, by_name("time_field"))
    since, modified_since = read_filter(params, by_name("since")), read_filter(params, by_name("modified_since"))
    if modified_since is not None:  # spec: alias for time_field=modified_at with since
        if params.has("time_field") and time_field != "modified_at":
            raise BadRequest("modified_since implies time_field=modified_at", code="conflicting_parameters",
                             details={"parameters": ["modified_since", "time_field"]})
        time_field, since = "modified_at", max(since or modified_since, modified_since)
    until = read_filter(params, by_name("until"))
    if until is not None and until > now + CLOCK_SKEW:
        raise bad_param("until", "must not be in the future")
    window = clamp_since(since, tier.article_lookback_days, now)
    return {"time_field": time_field, "since": window.since, "until": until, "floor": window.floor,
            WINDOW: window}


GROUPS: dict[str, Group] = {"severity": _severity, "cve": _cve, "text": _text, "time": _time}


def read_filters(params: Params, tier: Tier, now: datetime) -> dict[str, Any]:
    """Every parameter of the filter table as ArticleQuery fields (plus the time window), in table order."""
    fields: dict[str, Any] = {}
    groups_read: set[str] = set()
    for entry in article_filters.ARTICLE_FILTERS:
        if entry.group is None:
            fields[entry.field] = read_filter(params, entry)
        elif entry.group not in groups_read:  # a group is read once, at its first parameter
            fields.update(GROUPS[entry.group](params, tier, now))
            groups_read.add(entry.group)
    return fields


def _limit(params: Params, tier: Tier, fmt: str) -> tuple[int, bool]:
    cap = tier.articles_max if fmt == "json" else tier.articles_export_max
    return cap_limit(params.limit(50), cap)


def _offset(params: Params) -> int:
    offset = params.integer("offset", 0, minimum=0) or 0
    if offset > MAX_OFFSET:
        raise BadRequest(f"offset above {MAX_OFFSET} is not supported; follow links.next (the cursor) instead",
                         code="deep_paging_unsupported", details={"parameter": "offset", "max_offset": MAX_OFFSET})
    return offset


def cursor_kind(sort: str) -> str:
    return f"articles:{sort}"


def decode_cursor(params: Params, secret: str, sort: str) -> tuple[Any, str] | None:
    """The keyset position of a cursor; ``invalid_cursor`` when tampered or made for another sort."""

    def position(payload: dict[str, Any]) -> tuple[Any, str]:
        value = payload["v"]
        return (parse_iso(str(value)) if ARTICLE_SORTS[sort][0] in TIME_FIELDS else value), str(payload["id"])

    return read_cursor(params, secret, cursor_kind(sort), position, {"sort": sort})


def encode_position(value: Any) -> Any:
    return iso(value) if isinstance(value, datetime) else value


def next_cursor(secret: str, sort: str, end: tuple[Any, str]) -> str:
    """The signed cursor of the page after the one whose last row sits at ``end`` (sort value, id)."""
    value, last_id = end
    return sign(secret, cursor_kind(sort), {"v": encode_position(value), "id": last_id})


def _shown(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else iso(value) if isinstance(value, datetime) else value


def echo_filters(query: ArticleQuery) -> dict[str, Any]:
    """meta.filters: every applied filter (lists as lists), the time field, bounds and sort."""
    echo: dict[str, Any] = {}
    for entry in article_filters.ARTICLE_FILTERS:
        value = getattr(query, entry.field)
        if entry.echo == "always" or (entry.echo == "set" and is_set(value)):
            echo[entry.name] = entry.show(value) if entry.show and value is not None else _shown(value)
    return {**echo, "sort": query.sort}


def parse_article_request(params: Params, tier: Tier, now: datetime, secret: str) -> ArticleRequest:
    """Every rule of the parameter table; raises BadRequest (400) naming the parameter."""
    fmt = params.text("format", "json", FORMATS) or "json"
    sort = params.text("sort", "published:desc", ARTICLE_SORTS) or "published:desc"
    fields = read_filters(params, tier, now)
    window: Window = fields.pop(WINDOW)
    limit, capped = _limit(params, tier, fmt)
    offset, after = _offset(params), decode_cursor(params, secret, sort)
    if after is not None and offset:
        raise BadRequest("give either 'cursor' or 'offset', not both", code="conflicting_parameters",
                         details={"parameters": ["cursor", "offset"]})
    query = ArticleQuery(**fields, sort=sort, after=after, offset=offset, limit=limit)
    headers = window_headers(window, capped)
    if uses_cve_alias(params):
        headers.update(DEPRECATION_HEADERS)
    return ArticleRequest(query, fmt, params.csv("fields"), params.csv("expand", EXPANSIONS),
                          params.text("count_strategy", "none", COUNT_STRATEGIES) or "none", echo_filters(query),
                          headers)
