"""Pure translation of query specs into MongoDB filters and sorts (no I/O; tested by parameters).

Every function mirrors its twin in ``store.sqlite.queries`` so both backends return the same rows; the
conformance suite (tests/conformance) holds them to it. Articles are stored with ``_id`` = article id,
IOCs with ``_id`` = ``type:value`` (see ``store.mongo.documents``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from store.article_filters import AnyOf, AtLeast, Generic, clauses
from store.decay import STATUSES
from store.query import TIME_FIELDS, ArticleQuery, IocQuery, TextQuery, added_start, status_clock
from store.records import parse_iso, severity_range
from store.sqlite.queries import score_bounds, walks_order, word_prefix_pattern
from store.value_search import prefix_end, prefix_only, trigrams

Filter = dict[str, Any]
Sort = list[tuple[str, int]]

IOC_SORT: Sort = [("first_seen", 1), ("type", 1), ("value", 1)]
# The same order for one type, spelt as the prefix of its index (type, first_seen, value): with type fixed
# both sorts list the same rows, and this one the planner serves from the index without a sort stage.
ONE_TYPE_SORT: Sort = [("type", 1), ("first_seen", 1), ("value", 1)]
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


def _archived(q: ArticleQuery) -> list[Filter]:
    return [] if q.include_archived else [{"is_archived": False}]


def _severity_buckets(q: ArticleQuery) -> list[Filter]:
    if not q.severity_labels:
        return []
    return [{"$or": [{"severity_score": severity_filter(s)} for s in q.severity_labels]}]


def _cve_text(q: ArticleQuery) -> list[Filter]:
    if not q.cve_text:
        return []
    # Spec: substring match on title and AI summary, case-insensitive (a shorter id matches a longer one).
    needle = regex("(?i)" + re.escape(q.cve_text))
    return [{"$or": [{"title": needle}, {"ai_summary": needle}]}]


def _times(q: ArticleQuery) -> list[Filter]:
    out: list[Filter] = []
    if q.floor is not None:
        out.append({"published_at": {"$gte": q.floor}})
    bounds = {op: value for op, value in (("$gte", q.since), ("$lte", q.until)) if value is not None}
    if bounds:
        out.append({q.time_field: bounds})
    return out


def _text(q: ArticleQuery) -> list[Filter]:
    """The clauses of ``q.text``, its ``$text`` operand as a ``{"$text": ...}`` clause (see article_filter)."""
    if q.text is None:
        return []
    search, clauses = text_filter(q.text)
    return ([{"$text": search}] if search is not None else []) + clauses


# The Builder predicates of store.article_filters (the SQLite builder has the same names).
BUILDERS: dict[str, Callable[[ArticleQuery], list[Filter]]] = {
    "archived": _archived, "severity_buckets": _severity_buckets, "cve_text": _cve_text, "time_window": _times,
    "text": _text,
}


def _predicate(predicate: Generic, value: Any) -> Filter:
    """The filter of a generic predicate (store.article_filters) for a set value; an array field matches
    when any element does, which is the spec's any-match."""
    if isinstance(predicate, AtLeast):
        return {predicate.column: {"$gte": value}}
    path = (predicate.path or predicate.column) if isinstance(predicate, AnyOf) else predicate.column
    return {path: {"$in": list(value)} if isinstance(value, tuple) else value}


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
    every = clauses(q, BUILDERS, _predicate)
    search = next((c["$text"] for c in every if "$text" in c), None)
    rest = [c for c in every if "$text" not in c]
    if q.after is not None:
        value, last_id = q.after
        rest.append(keyset([(q.sort_field, sort_value(q.sort_field, value)), ("_id", last_id)], q.descending))
    return search, and_(rest)


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


def value_contains(needle: str) -> list[Filter]:
    """``store.value_search``: a prefix by the value index below three characters; else every trigram of the
    needle through the multikey ``grams`` index (the planner picks the rarest), then the case-sensitive
    substring itself (like SQLite's instr)."""
    if prefix_only(needle):
        return [{"value": {"$gte": needle, "$lt": prefix_end(needle)}}]
    return [*({"grams": gram} for gram in trigrams(needle)), {"value": regex(re.escape(needle))}]


def _ioc_time(value: datetime | str) -> datetime:
    return parse_iso(value) if isinstance(value, str) else value


def _since(q: IocQuery, since: datetime) -> Filter:
    """As ``store.sqlite.queries._since``: a poll of changes also finds the expiries in (since, now]."""
    if not q.status_changes:
        return {"modified": {"$gte": since}}
    expired = {"valid_until": {"$gt": since, "$lte": status_clock(q)}}
    if q.floor is not None:
        expired["modified"] = {"$gte": q.floor}
    return {"$or": [{"modified": {"$gte": since}}, expired]}


def _status(status: str, now: datetime) -> Filter:
    if status == "revoked":
        return {"revoked": True}
    return {"revoked": {"$ne": True}, "valid_until": {"$gt": now} if status == "active" else {"$lte": now}}


def lifecycle_filters(q: IocQuery) -> list[Filter]:
    """As ``store.sqlite.queries.lifecycle_clauses``: statuses and ``min_score`` on the stored fields."""
    now = status_clock(q)
    clauses: list[Filter] = []
    if q.statuses and set(q.statuses) != set(STATUSES):
        clauses.append({"$or": [_status(s, now) for s in STATUSES if s in q.statuses]})
    if q.min_score:
        bounds = score_bounds(q, now)
        clauses.append({"revoked": {"$ne": True}, "$or": [
            {"type": {"$in": list(types)}, "valid_until": {"$gte": parse_iso(at)}} for types, at in bounds.items()]})
    return clauses
# The default filter: records on no warninglist (the flag is only stored on listed ones, store.mongo.documents).
LISTED_OUT: Filter = {"warninglisted": {"$ne": True}}


def ioc_filter(q: IocQuery) -> Filter:
    """Filter of an IOC query, keyset on (first_seen, type, value) included, or on (date_added, type, value)
    for ``q.added_order`` (its arms ORed; a page reads each apart, :func:`added_arms`)."""
    clauses = ioc_clauses(q)
    if q.added_order or q.added_after is not None:
        clauses.append({"$or": [arm for _, arm in added_arms(q)]})
    if q.after is not None and not q.added_order:
        first_seen, ioc_type, value = q.after
        clauses.append(keyset([("first_seen", _ioc_time(first_seen)), ("type", ioc_type), ("value", value)], False))
    return and_(clauses)


def ioc_clauses(q: IocQuery) -> list[Filter]:
    """Every filter of ``q`` but its position in the page order."""
    pairs: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("type", q.types), ("confidence", q.confidences), ("source_category", q.categories),
        ("value", q.values), ("industries", q.industries), ("stix_id", q.stix_ids), ("sources", q.sources),
        ("threat_actors", q.threat_actors),
    )
    clauses: list[Filter] = [{name: {"$in": list(values)}} for name, values in pairs if values]
    if q.value_contains:
        clauses += value_contains(q.value_contains)
    if q.severities:
        clauses.append(ioc_severities(q.severities))
    if not q.include_warninglisted:
        clauses.append(LISTED_OUT)
    if q.since is not None:
        clauses.append(_since(q, q.since))
    return clauses + lifecycle_filters(q)


def _expired(now: datetime) -> Filter:
    """Records whose date_added is their expiry (store.sqlite.queries.added_arms): expired after their last
    change."""
    return {"revoked": {"$ne": True}, "valid_until": {"$lte": now}, "$expr": {"$gt": ["$valid_until", "$modified"]}}


def added_arms(q: IocQuery) -> list[tuple[str, Filter]]:
    """As ``store.sqlite.queries.added_arms``: (field holding the date_added, filter of the records it holds it
    for, ``added_after`` and the position on it included), read each in :func:`added_sort` order."""
    now = status_clock(q)
    arms: list[tuple[str, list[Filter]]] = [("modified", [{"$nor": [_expired(now)]}])]
    if not q.statuses or "expired" in q.statuses:
        arms.append(("valid_until", [_expired(now), *([{"modified": {"$gte": q.floor}}] if q.floor else [])]))
    start = added_start(q)
    for field, parts in arms:
        if start is not None:
            parts.append(keyset([(field, start[0]), *start[1]], False))
    return [(field, and_(parts)) for field, parts in arms]


def added_sort(q: IocQuery, field: str) -> Sort:
    """An arm's order (date_added in ``field``, type, value), spelt as its index's keys: (type, field, value)
    for one type."""
    if len(q.types) == 1:
        return [("type", 1), (field, 1), ("value", 1)]
    return [(field, 1), ("type", 1), ("value", 1)]


def ioc_severities(labels: tuple[str, ...]) -> Filter:
    """Records whose ``severity`` is in any of the buckets; one written before the field existed counts as
    0, low (as on SQLite)."""
    buckets: list[Filter] = [{"severity": severity_filter(label)} for label in labels]
    return {"$or": buckets + ([{"severity": None}] if "low" in labels else [])}


def ioc_sort(q: IocQuery) -> Sort:
    """The page order of ``q`` (first_seen, type, value), as its index serves it."""
    return ONE_TYPE_SORT if len(q.types) == 1 else IOC_SORT


def ioc_hint(q: IocQuery, now: datetime) -> Sort | None:
    """The index a page of ``q`` walks when ``since`` reaches far back (``store.sqlite.queries.walks_order``):
    the page order's, so ``limit`` rows end the read. None leaves the choice to the planner: a recent
    ``since`` (a few days of records, found by modified) or a filter with an index of its own (values,
    STIX ids, a substring)."""
    if q.values or q.stix_ids or q.value_contains or not walks_order(q, now):
        return None
    return ioc_sort(q)


def severity_filter(label: str) -> Filter:
    """Spec "Severity buckets", from the one definition (store.records.severity_range): half-open ranges,
    the same as the SQLite backend's, so every score has exactly one label (an 8.95 is high)."""
    lower, upper = severity_range(label)
    return {**({"$gte": lower} if lower is not None else {}), **({"$lt": upper} if upper is not None else {})}
