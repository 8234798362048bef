"""GET /api/v1/articles parameters -> one immutable request (spec, GET /api/v1/articles; issue 4).

Pure: every rule of the spec's parameter table is checked here, before a byte of body is sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from config.tiers import Tier
from exporters.articles import EXPANSIONS
from server.errors import BadRequest, bad_param
from server.params import Params
from server.tokens import InvalidToken, sign, verify
from server.windows import Window, cap_limit, clamp_since, window_headers
from store.query import ARTICLE_SORTS, TEXT_FIELDS, TIME_FIELDS, ArticleQuery, TextQuery
from store.records import CATEGORIES, INDUSTRY_TAGS, SEVERITY_LABELS, iso, parse_iso

FORMATS = ("json", "ndjson", "csv")
COUNT_STRATEGIES = ("none", "planned", "exact")
MAX_OFFSET = 1000
CLOCK_SKEW = timedelta(seconds=5)
CVE_PATTERN = re.compile(r"^CVE-\d{4}-\d{4,7}$", re.IGNORECASE)
TECHNIQUE_PATTERN = re.compile(r"^T\d{4}(\.\d{3})?$")
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


# The most distinct terms (included and excluded) one ``q`` may hold: every term is one more clause.
MAX_Q_TERMS = 32


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
    if len(terms) + len(excluded) > MAX_Q_TERMS:  # issue 15: a query error, never "SQLite: tree too large"
        raise BadRequest(f"q has more than {MAX_Q_TERMS} distinct terms", code="q_invalid",
                         details={"parameter": "q", "max_terms": MAX_Q_TERMS})
    if not terms:
        raise BadRequest("q needs at least one term that is not excluded", code="q_invalid",
                         details={"parameter": "q"})
    return TextQuery(terms, excluded, q_field)


def _tiers(params: Params) -> tuple[int, ...]:
    values = params.csv("source_tier", ("1", "2", "3", "4"))
    return tuple(int(v) for v in values)


def _severity(params: Params) -> tuple[float | None, tuple[str, ...]]:
    minimum = params.number("min_severity", 0.0, 10.0)
    labels = params.csv("severity", SEVERITY_LABELS)
    if minimum is not None and labels:
        raise BadRequest("give either 'severity' or 'min_severity', not both", code="conflicting_parameters",
                         details={"parameters": ["severity", "min_severity"]})
    return minimum, labels


def _cve(params: Params) -> tuple[str | None, bool]:
    """``cve_text_search``, or the deprecated ``cve`` alias (second item True when the alias was used)."""
    name = "cve_text_search" if params.has("cve_text_search") or not params.has("cve") else "cve"
    value = params.raw(name)
    if value is not None and not CVE_PATTERN.match(value):
        raise bad_param(name, "must look like CVE-2024-12345 (CVE- then 4 digits, '-', 4 to 7 digits)")
    return (value.upper() if value else None), name == "cve"


def _technique(params: Params) -> str | None:
    value = params.raw("mitre_technique")
    if value is not None and not TECHNIQUE_PATTERN.match(value.upper()):
        raise bad_param("mitre_technique", "must be one technique id such as T1566 or T1566.001")
    return value.upper() if value else None


def _time(params: Params, tier: Tier, now: datetime) -> tuple[str, Window, datetime | None]:
    time_field = params.text("time_field", "published_at", TIME_FIELDS) or "published_at"
    since = params.timestamp("since")
    modified_since = params.timestamp("modified_since")
    if modified_since is not None:  # spec: alias for time_field=modified_at with since
        if params.has("time_field") and time_field != "modified_at":
            raise BadRequest("modified_since implies time_field=modified_at", code="conflicting_parameters",
                             details={"parameters": ["modified_since", "time_field"]})
        time_field, since = "modified_at", max(since or modified_since, modified_since)
    until = params.timestamp("until")
    if until is not None and until > now + CLOCK_SKEW:
        raise bad_param("until", "must not be in the future")
    return time_field, clamp_since(since, tier.article_lookback_days, now), until


def _limit(params: Params, tier: Tier, fmt: str) -> tuple[int, bool]:
    limit = params.integer("limit", 50, minimum=1) or 50
    cap = tier.articles_max if fmt == "json" else tier.articles_export_max
    return cap_limit(limit, cap)


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
    token = params.raw("cursor")
    if token is None:
        return None
    try:
        payload = verify(secret, cursor_kind(sort), token)
        value, last_id = payload["v"], str(payload["id"])
    except (InvalidToken, KeyError) as exc:
        raise BadRequest("the cursor is invalid, tampered with, or belongs to another sort", code="invalid_cursor",
                         details={"parameter": "cursor", "sort": sort}) from exc
    if ARTICLE_SORTS[sort][0] in TIME_FIELDS:
        value = parse_iso(str(value))
    return value, last_id


def encode_position(value: Any) -> Any:
    return iso(value) if isinstance(value, datetime) else value


def next_cursor(secret: str, sort: str, end: tuple[Any, str]) -> str:
    """The signed cursor of the page after the one whose last row sits at ``end`` (sort value, id)."""
    value, last_id = end
    return sign(secret, cursor_kind(sort), {"v": encode_position(value), "id": last_id})


def _lists(params: Params) -> dict[str, Any]:
    return {
        "sources": params.csv("source"),
        "source_tiers": _tiers(params),
        "categories": params.csv("category", CATEGORIES),
        "content_types": params.csv("content_type"),
        "tech_tags": params.csv("tech_tags"),
        "industry_tags": params.csv("industry_tags", INDUSTRY_TAGS),
        "threat_actors": tuple(a.lower() for a in params.csv("threat_actor")),
    }


def _flags(params: Params) -> dict[str, Any]:
    return {
        "source_type": params.text("source_type", None, ("rss", "community")),
        "has_iocs": params.flag("has_iocs"),
        "has_ai_summary": params.flag("has_ai_summary"),
        "has_audio": params.flag("has_audio"),
        "include_archived": bool(params.flag("is_archived", False)),
        "submission_type": params.text("submission_type", None, ("rss_auto", "user_submitted")),
        "mitre_technique": _technique(params),
    }


def _echo(query: ArticleQuery) -> dict[str, Any]:
    """meta.filters: every applied filter (lists as lists), the time field, bounds and sort."""
    echo: dict[str, Any] = {"time_field": query.time_field, "since": iso(query.since) if query.since else None,
                            "sort": query.sort}
    names = {"sources": "source", "source_tiers": "source_tier", "categories": "category",
             "content_types": "content_type", "tech_tags": "tech_tags", "industry_tags": "industry_tags",
             "threat_actors": "threat_actor", "severity_labels": "severity"}
    for attr, name in names.items():
        if getattr(query, attr):
            echo[name] = list(getattr(query, attr))
    for name in ("source_type", "min_severity", "has_iocs", "mitre_technique", "has_ai_summary", "has_audio",
                 "submission_type"):
        if getattr(query, name) is not None:
            echo[name] = getattr(query, name)
    if query.cve_text:
        echo["cve_text_search"] = query.cve_text
    if query.until:
        echo["until"] = iso(query.until)
    if query.text:
        echo["q"] = " ".join([*query.text.terms, *("-" + t for t in query.text.excluded)])
        echo["q_field"] = query.text.field
    echo["is_archived"] = query.include_archived
    return echo


def parse_article_request(params: Params, tier: Tier, now: datetime, secret: str) -> ArticleRequest:
    """Every rule of the parameter table; raises BadRequest (400) naming the parameter."""
    fmt = params.text("format", "json", FORMATS) or "json"
    sort = params.text("sort", "published:desc", ARTICLE_SORTS) or "published:desc"
    minimum, labels = _severity(params)
    cve, deprecated = _cve(params)
    time_field, window, until = _time(params, tier, now)
    limit, capped = _limit(params, tier, fmt)
    offset, after = _offset(params), decode_cursor(params, secret, sort)
    if after is not None and offset:
        raise BadRequest("give either 'cursor' or 'offset', not both", code="conflicting_parameters",
                         details={"parameters": ["cursor", "offset"]})
    query = ArticleQuery(
        **_lists(params), **_flags(params), min_severity=minimum, severity_labels=labels, cve_text=cve,
        text=parse_q(params.raw("q"), params.text("q_field", "default", TEXT_FIELDS) or "default"),
        time_field=time_field, since=window.since, until=until, floor=window.floor, sort=sort, after=after,
        offset=offset, limit=limit)
    headers = window_headers(window, capped)
    if deprecated:
        headers.update(DEPRECATION_HEADERS)
    fields = params.csv("fields")
    return ArticleRequest(query, fmt, fields, params.csv("expand", EXPANSIONS),
                          params.text("count_strategy", "none", COUNT_STRATEGIES) or "none", _echo(query), headers)
