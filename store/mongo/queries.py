"""Pure translation of query specs into MongoDB filters and sorts (no I/O; tested by parameters).

Every function mirrors its twin in ``store.sqlite.queries`` so both backends return the same rows; the
conformance suite (tests/conformance) holds them to it. Articles are stored with ``_id`` = article id,
IOCs with ``_id`` = ``type:value`` (see ``store.mongo.documents``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from store.query import TIME_FIELDS, ArticleQuery, IocQuery, TextQuery
from store.records import parse_iso, severity_range
from store.sqlite.queries import word_prefix_pattern

Filter = dict[str, Any]
Sort = list[tuple[str, int]]

IOC_SORT: Sort = [("first_seen", 1), ("type", 1), ("value", 1)]
# Inflection endings dropped before a term becomes a word-prefix regex (see ``search_stem``).
_ENDINGS: tuple[str, ...] = ("ies", "ied", "ing", "ed", "es", "s")
_TEXT_FIELDS: tuple[str, ...] = ("title", "summary")


def and_(clauses: list[Filter]) -> Filter:
    """One filter from clauses that must all hold; ``{}`` matches everything."""
    if not clauses:
        return {}
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def regex(pattern: str) -> re.Pattern[str]:
    """A compiled pattern: PyMongo sends it as a BSON regex, mongomock evaluates it with ``re``."""
    return re.compile(pattern)


def search_stem(term: str) -> str:
    """A light stem of ``term``: lower case, one inflection ending dropped while 3+ letters remain.

    The stem is always a prefix of the term, so as a word-prefix regex it matches the term itself and
    its inflections ("attacks" -> "attack" matches "attacked"), which is what the stemmed FTS5 index of
    the SQLite backend matches.
    """
    word = term.lower()
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def clean_term(term: str) -> str:
    """``term`` without double quotes or leading dashes, which ``$search`` reads as phrase and negation."""
    return term.replace('"', " ").strip().lstrip("-").strip()


def search_string(text: TextQuery) -> str:
    """The ``$text`` search string: every term (a logical OR, stemmed by the server), ``-term`` excluded."""
    words = [clean_term(t) for t in text.terms] + [f"-{clean_term(t)}" for t in text.excluded if clean_term(t)]
    return " ".join(w for w in words if w)


def _any_text_field(pattern: str) -> Filter:
    return {"$or": [{name: regex(pattern)} for name in _TEXT_FIELDS]}


def text_filter(text: TextQuery) -> tuple[Filter | None, list[Filter]]:
    """(``$text`` operand or None, extra clauses) for a full-text query.

    ``default`` uses the text index on title + summary (spec, parameter ``q_field``). ``$text`` ORs the
    terms, so each term also needs a word-prefix match of its stem in title or summary: that makes every
    term required, as in the SQLite backend, while the index still narrows the candidates. A query of
    exclusions alone cannot use ``$text`` (it needs one positive term) and scans. Other fields scan with
    the same word-prefix regex as SQLite's ``REGEXP``.
    """
    if text.field != "default":
        clauses: list[Filter] = [{text.field: regex(word_prefix_pattern(t))} for t in text.terms]
        clauses += [{text.field: {"$not": regex(word_prefix_pattern(t))}} for t in text.excluded]
        return None, clauses
    stems = [word_prefix_pattern(search_stem(clean_term(t))) for t in text.terms if clean_term(t)]
    if stems:
        return {"$search": search_string(text)}, [_any_text_field(p) for p in stems]
    excluded = [word_prefix_pattern(search_stem(clean_term(t))) for t in text.excluded if clean_term(t)]
    return None, [{"$nor": _any_text_field(p)["$or"]} for p in excluded]


def _flags(q: ArticleQuery) -> list[Filter]:
    out: list[Filter] = []
    for name, flag in (("has_iocs", q.has_iocs), ("has_audio", q.has_audio), ("has_ai_summary", q.has_ai_summary)):
        if flag is not None:
            out.append({name: flag})
    if not q.include_archived:
        out.append({"is_archived": False})
    return out


def _lists(q: ArticleQuery) -> list[Filter]:
    # Array fields (tags, actors) match when any element is in the list: the spec's any-match.
    pairs: tuple[tuple[str, tuple[Any, ...]], ...] = (
        ("source_name", q.sources), ("category", q.categories), ("content_type", q.content_types),
        ("source_tier", q.source_tiers), ("tech_tags", q.tech_tags), ("industry_tags", q.industry_tags),
        ("threat_actors", q.threat_actors),
    )
    out: list[Filter] = [{name: {"$in": list(values)}} for name, values in pairs if values]
    if q.severity_labels:
        out.append({"$or": [{"severity_score": severity_filter(s)} for s in q.severity_labels]})
    return out


def _scalars(q: ArticleQuery) -> list[Filter]:
    out: list[Filter] = []
    for name, value in (("source_type", q.source_type), ("submission_type", q.submission_type)):
        if value is not None:
            out.append({name: value})
    if q.min_severity is not None:
        out.append({"severity_score": {"$gte": q.min_severity}})
    if q.cve_text:
        # Spec: substring match on title and AI summary, case-insensitive (a shorter id matches a longer one).
        needle = regex("(?i)" + re.escape(q.cve_text))
        out.append({"$or": [{"title": needle}, {"ai_summary": needle}]})
    if q.mitre_technique:
        out.append({"mitre_techniques.id": q.mitre_technique})
    return out


def _times(q: ArticleQuery) -> list[Filter]:
    out: list[Filter] = []
    if q.floor is not None:
        out.append({"published_at": {"$gte": q.floor}})
    bounds = {op: value for op, value in (("$gte", q.since), ("$lte", q.until)) if value is not None}
    if bounds:
        out.append({q.time_field: bounds})
    return out


def sort_value(field: str, value: Any) -> Any:
    """A keyset value as stored: time fields are BSON dates (a cursor may carry them as ISO text)."""
    if field in TIME_FIELDS and isinstance(value, str):
        return parse_iso(value)
    return value


def keyset(fields: list[tuple[str, Any]], descending: bool) -> Filter:
    """Rows strictly after ``fields`` (name, value) in lexicographic order: the row-value comparison
    ``(a, b, c) > (x, y, z)`` spelt as ``a > x OR (a = x AND b > y) OR ...`` (``<`` when descending)."""
    op = "$lt" if descending else "$gt"
    branches: list[Filter] = []
    for depth, (name, value) in enumerate(fields):
        branch: Filter = {prior: prior_value for prior, prior_value in fields[:depth]}
        branch[name] = {op: value}
        branches.append(branch)
    return {"$or": branches}


def article_filter(q: ArticleQuery) -> tuple[Filter | None, Filter]:
    """(``$text`` operand or None, filter of every other condition of ``q``), keyset ``after`` included.

    ``$text`` is returned apart because it must sit at the top level of the query document.
    """
    clauses = _flags(q) + _lists(q) + _scalars(q) + _times(q)
    search: Filter | None = None
    if q.text is not None:
        search, extra = text_filter(q.text)
        clauses += extra
    if q.after is not None:
        value, last_id = q.after
        clauses.append(keyset([(q.sort_field, sort_value(q.sort_field, value)), ("_id", last_id)], q.descending))
    return search, and_(clauses)


def article_query(q: ArticleQuery) -> Filter:
    """The whole query document of ``q`` (``$text`` at its top level when there is one)."""
    search, rest = article_filter(q)
    if search is None:
        return rest
    return {"$text": search, **({"$and": [rest]} if rest else {})}


def article_sort(q: ArticleQuery) -> Sort:
    """Sort key plus ``_id`` as the tie-break, both in the sort's direction (matches the keyset)."""
    direction = -1 if q.descending else 1
    return [(q.sort_field, direction), ("_id", direction)]


def _ioc_time(value: datetime | str) -> datetime:
    return parse_iso(value) if isinstance(value, str) else value


def ioc_filter(q: IocQuery) -> Filter:
    """Filter of an IOC query, keyset on (first_seen, type, value) included."""
    pairs: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("type", q.types), ("confidence", q.confidences), ("source_category", q.categories),
        ("value", q.values), ("industries", q.industries), ("stix_id", q.stix_ids),
    )
    clauses: list[Filter] = [{name: {"$in": list(values)}} for name, values in pairs if values]
    if q.value_contains:
        clauses.append({"value": regex(re.escape(q.value_contains))})  # case-sensitive, like SQLite's instr
    if q.since is not None:
        clauses.append({"modified": {"$gte": q.since}})
    if q.added_after is not None:
        clauses.append({"first_seen": {"$gt": q.added_after}})
    if q.after is not None:
        first_seen, ioc_type, value = q.after
        clauses.append(keyset([("first_seen", _ioc_time(first_seen)), ("type", ioc_type), ("value", value)], False))
    return and_(clauses)


def severity_filter(label: str) -> Filter:
    """Spec "Severity buckets", from the one definition (store.records.severity_range): half-open ranges,
    the same as the SQLite backend's, so every score has exactly one label (an 8.95 is high)."""
    lower, upper = severity_range(label)
    return {**({"$gte": lower} if lower is not None else {}), **({"$lt": upper} if upper is not None else {})}
