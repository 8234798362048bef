"""Every filter of GET /api/v1/articles, declared once (spec, GET /api/v1/articles, parameter table).

One entry per query parameter says how it is read (``kind``, allowed ``values``, ``convert``), which
``ArticleQuery`` field it sets, how OpenAPI documents it, how ``meta.filters`` echoes it and the
predicate both backends apply. The server's parser, echo and OpenAPI list and the SQLite and MongoDB
query builders all iterate :data:`ARTICLE_FILTERS`, so a filter with a generic predicate is one entry.

Parameters that depend on each other (``severity``/``min_severity``, ``cve``/``cve_text_search``,
``q``/``q_field``, the time window) name a ``group``: the server reads a group with one named rule
(server.article_params). A predicate no generic kind covers is a :class:`Builder`: each backend has a
function of that name which reads the whole query.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from store.query import MAX_Q_TERMS, TEXT_FIELDS, TIME_FIELDS, ArticleQuery, TextQuery
from store.records import CATEGORIES, INDUSTRY_TAGS, SEVERITY_LABELS

C = TypeVar("C")  # a backend's clause type
# How a parameter is read (server.params.Params) and, unless ``schema`` says otherwise, documented.
Kind = Literal["csv", "choice", "flag", "number", "pattern", "date-time", "text"]
# When meta.filters shows a field: when set (not None, not empty), always, or never (an alias's field is
# shown under the parameter it aliases).
Echo = Literal["set", "always", "never"]


@dataclass(frozen=True, slots=True)
class Equals:
    """The column equals the value, or (a list) any of the values."""

    column: str


@dataclass(frozen=True, slots=True)
class AnyOf:
    """The array field holds the value or (a list) any of the values: a JSON array column in SQLite
    (``column``), an array in MongoDB (``path``, the column when not given)."""

    column: str
    path: str | None = None


@dataclass(frozen=True, slots=True)
class IsTrue:
    """The boolean field equals the flag; ``sql`` is the SQLite expression when it is not a column."""

    column: str
    sql: str | None = None


@dataclass(frozen=True, slots=True)
class AtLeast:
    """The numeric column is at least the value."""

    column: str


@dataclass(frozen=True, slots=True)
class Builder:
    """A predicate of its own: ``name`` keys a function of the whole query in each backend's builders."""

    name: str


Generic = Equals | AnyOf | IsTrue | AtLeast
Predicate = Generic | Builder
# Clauses are emitted grouped by predicate kind (table order within a kind): one stable shape per query.
PREDICATE_ORDER: tuple[type, ...] = (IsTrue, Equals, AnyOf, AtLeast, Builder)


@dataclass(frozen=True, slots=True)
class ArticleFilter:
    """One query parameter of GET /api/v1/articles.

    ``description`` is an OpenAPI description; ``{lookback}`` in it stands for each tier's lookback (the
    server fills it from config.tiers). ``schema`` overrides the schema derived from ``kind``.
    """

    name: str
    field: str
    kind: Kind
    description: str
    values: tuple[str, ...] = ()
    predicate: Predicate | None = None
    group: str | None = None
    default: Any = None
    convert: Callable[[str], Any] | None = None
    bounds: tuple[float, float] = (0, 0)
    pattern: re.Pattern[str] | None = None
    rule: str = ""
    schema: Mapping[str, Any] | None = None
    echo: Echo = "set"
    show: Callable[[Any], Any] | None = None
    deprecated: bool = False


_CVE_SCHEMA = {"type": "string", "pattern": "^[Cc][Vv][Ee]-[0-9]{4}-[0-9]{4,7}$"}  # CVE_PATTERN, either case
CVE_PATTERN = re.compile(r"^CVE-\d{4}-\d{4,7}$")
CVE_RULE = "must look like CVE-2024-12345 (CVE- then 4 digits, '-', 4 to 7 digits)"
_BOTH = "Exclusive with `{other}` (both: 400 conflicting_parameters)."


def _spelling(text: TextQuery) -> str:
    """``q`` as applied: the kept terms, then each excluded one as ``-term``."""
    return " ".join([*text.terms, *("-" + t for t in text.excluded)])


ARTICLE_FILTERS: tuple[ArticleFilter, ...] = (
    ArticleFilter("source", "sources", "csv", "Exact source names (see /api/v1/sources), any-match.",
                  predicate=Equals("source_name")),
    ArticleFilter("source_type", "source_type", "choice", "Source type.", ("rss", "community"),
                  predicate=Equals("source_type")),
    ArticleFilter("source_tier", "source_tiers", "csv", "Source tiers 1-4.", ("1", "2", "3", "4"),
                  predicate=Equals("source_tier"), convert=int),
    ArticleFilter("category", "categories", "csv", "Category slugs.", CATEGORIES, predicate=Equals("category")),
    ArticleFilter("content_type", "content_types", "csv",
                  "Content types (e.g. security, educational, news); all by default.",
                  predicate=Equals("content_type")),
    ArticleFilter("tech_tags", "tech_tags", "csv", "Technology tags, any-match.", predicate=AnyOf("tech_tags")),
    ArticleFilter("industry_tags", "industry_tags", "csv", "Industry tags, any-match.", INDUSTRY_TAGS,
                  predicate=AnyOf("industry_tags")),
    ArticleFilter("threat_actor", "threat_actors", "csv", "Lowercase canonical actor names, any-match.",
                  predicate=AnyOf("threat_actors"), convert=str.lower),
    ArticleFilter("min_severity", "min_severity", "number",
                  "Exclude articles scoring below. " + _BOTH.format(other="severity"),
                  predicate=AtLeast("severity_score"), group="severity", bounds=(0, 10)),
    ArticleFilter("severity", "severity_labels", "csv", "Severity buckets (critical 9-10, high 7-8.9, medium "
                  "4-6.9, low below 4). " + _BOTH.format(other="min_severity"), SEVERITY_LABELS,
                  predicate=Builder("severity_buckets"), group="severity"),
    ArticleFilter("has_iocs", "has_iocs", "flag", "true/false/1/0.", predicate=IsTrue("has_iocs")),
    ArticleFilter("cve_text_search", "cve_text", "pattern",
                  "Substring match on title and AI summary (a shorter id also matches a longer one).",
                  predicate=Builder("cve_text"), group="cve", pattern=CVE_PATTERN, rule=CVE_RULE,
                  schema=_CVE_SCHEMA),
    ArticleFilter("cve", "cve_text", "pattern",
                  "Deprecated alias of cve_text_search; responses carry Deprecation and Sunset headers.",
                  group="cve", pattern=CVE_PATTERN, rule=CVE_RULE, schema=_CVE_SCHEMA, echo="never",
                  deprecated=True),
    ArticleFilter("mitre_technique", "mitre_technique", "pattern", "One ATT&CK technique id (case-insensitive).",
                  predicate=AnyOf("technique_ids", "mitre_techniques.id"), pattern=re.compile(r"^T\d{4}(\.\d{3})?$"),
                  rule="must be one technique id such as T1566 or T1566.001",
                  schema={"type": "string", "pattern": "^[Tt][0-9]{4}(\\.[0-9]{3})?$"}),
    ArticleFilter("has_ai_summary", "has_ai_summary", "flag", "true/false/1/0.",
                  predicate=IsTrue("has_ai_summary", sql="(coalesce(ai_summary, '') != '')")),
    ArticleFilter("has_audio", "has_audio", "flag", "true/false/1/0.", predicate=IsTrue("has_audio")),
    ArticleFilter("is_archived", "include_archived", "flag", "Include archived articles.",
                  predicate=Builder("archived"), default=False, echo="always"),
    ArticleFilter("submission_type", "submission_type", "choice", "Submission type.", ("rss_auto", "user_submitted"),
                  predicate=Equals("submission_type")),
    ArticleFilter("q", "text", "text", "Full-text query: every term must match (stemmed, case-insensitive); -term "
                  "excludes. Only letters, digits, spaces, '.', ',' and '-' are kept; then at least 2 characters and "
                  f"one alphabetic word of 3+ letters, and at most {MAX_Q_TERMS} distinct terms (repeats count once), "
                  "else 400 q_invalid.", predicate=Builder("text"), group="text", show=_spelling),
    ArticleFilter("q_field", "text", "choice", "default: title and summary through the full-text index; title, "
                  "summary, ai_summary: word-prefix scans (slower).", TEXT_FIELDS, group="text", default="default",
                  show=lambda text: text.field),
    ArticleFilter("time_field", "time_field", "choice", "The field since and until apply to. With `modified_since`, "
                  "only modified_at is allowed (another value: 400 conflicting_parameters).", TIME_FIELDS,
                  group="time", default="published_at", echo="always"),
    ArticleFilter("since", "since", "date-time", "Lower bound; older than the tier lookback ({lookback}) it is "
                  "clamped and X-Tier-Lookback-Clamped is set.", predicate=Builder("time_window"), group="time",
                  echo="always"),
    ArticleFilter("until", "until", "date-time", "Upper bound; in the future: 400.", group="time"),
    ArticleFilter("modified_since", "since", "date-time", "Alias for time_field=modified_at with since (delta "
                  "polling); with a `time_field` other than modified_at: 400 conflicting_parameters.", group="time",
                  echo="never"),
)
# ArticleQuery fields no parameter of this table sets: the tier floor, sort and paging.
NON_FILTER_FIELDS: frozenset[str] = frozenset({"floor", "sort", "after", "offset", "limit"})


def by_name(name: str) -> ArticleFilter:
    return next(f for f in ARTICLE_FILTERS if f.name == name)


def is_set(value: Any) -> bool:
    """Whether a field holds a filter: not None and not an empty list (``False`` is a filter)."""
    return value is not None and value != ()


def predicate_order() -> list[ArticleFilter]:
    """The entries with a predicate, in the order both backends emit their clauses."""
    chosen = [f for f in ARTICLE_FILTERS if f.predicate is not None]
    return sorted(chosen, key=lambda f: PREDICATE_ORDER.index(type(f.predicate)))


def clauses(query: ArticleQuery, builders: Mapping[str, Callable[[ArticleQuery], list[C]]],
            generic: Callable[[Generic, Any], C]) -> list[C]:
    """A backend's clauses for every filter of ``query``: each Builder's function of the whole query, and
    each generic predicate whose field is set (:func:`is_set`), in :func:`predicate_order`."""
    out: list[C] = []
    for entry in predicate_order():
        if isinstance(entry.predicate, Builder):
            out += builders[entry.predicate.name](query)
        elif entry.predicate is not None and is_set(value := getattr(query, entry.field)):
            out.append(generic(entry.predicate, value))
    return out
