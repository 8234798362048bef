"""Pure translation of query specs into SQLite WHERE clauses (no I/O; tested by parameters)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from store.article_filters import AnyOf, Equals, Generic, IsTrue, clauses
from store.decay import STATUSES, until_score
from store.ioctypes import IOC_TYPES
from store.query import ArticleQuery, IocQuery, TextQuery, added_start, status_clock
from store.records import iso, severity_range
from store.value_search import prefix_end, prefix_only

Clause = tuple[str, list[Any]]


def _bucket_sql(label: str, column: str = "severity_score") -> str:
    """Spec "Severity buckets", from the one definition (store.records.severity_range)."""
    lower, upper = severity_range(label)
    bounds = ([f"{column} >= {lower!r}"] if lower is not None else []) + \
             ([f"{column} < {upper!r}"] if upper is not None else [])
    return "(" + " AND ".join(bounds) + ")"


# An IOC record's severity (``Ioc.severity``); records written before it existed count as 0 (low) until
# a re-enrichment rebuilds them.
_IOC_SEVERITY = "coalesce(json_extract(doc, '$.severity'), 0)"


_SCAN_COLUMNS = {"title": "title", "summary": "summary", "ai_summary": "coalesce(ai_summary, '')"}


def _sql_value(value: Any) -> Any:
    return iso(value) if isinstance(value, datetime) else value


def _in(column: str, values: tuple[Any, ...]) -> Clause:
    return f"{column} IN ({', '.join('?' * len(values))})", list(values)


def _any_json(column: str, values: tuple[str, ...]) -> Clause:
    marks = ", ".join("?" * len(values))
    return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value IN ({marks}))", list(values)


def fts_phrase(terms: tuple[str, ...], joiner: str) -> str:
    """FTS5 query of quoted terms: quoting keeps user input from being read as FTS5 syntax."""
    return f" {joiner} ".join('"' + t.replace('"', '""') + '"' for t in terms)


def word_prefix_pattern(term: str) -> str:
    """Case-insensitive word-prefix regex used by the unindexed ``q_field`` scans (both backends)."""
    return r"(?i)\b" + re.escape(term)


def _text(text: TextQuery) -> list[Clause]:
    if text.field == "default":
        clauses: list[Clause] = []
        if text.terms:
            clauses.append(("rowid IN (SELECT rowid FROM articles_fts WHERE articles_fts MATCH ?)",
                            [fts_phrase(text.terms, "AND")]))
        if text.excluded:
            clauses.append(("rowid NOT IN (SELECT rowid FROM articles_fts WHERE articles_fts MATCH ?)",
                            [fts_phrase(text.excluded, "OR")]))
        return clauses
    column = _SCAN_COLUMNS[text.field]
    return [(f"{column} REGEXP ?", [word_prefix_pattern(t)]) for t in text.terms] + [
        (f"NOT ({column} REGEXP ?)", [word_prefix_pattern(t)]) for t in text.excluded
    ]


def _archived(q: ArticleQuery) -> list[Clause]:
    return [] if q.include_archived else [("is_archived = 0", [])]


def _severity_buckets(q: ArticleQuery) -> list[Clause]:
    if not q.severity_labels:
        return []
    return [("(" + " OR ".join(_bucket_sql(s) for s in q.severity_labels) + ")", [])]


def _cve_text(q: ArticleQuery) -> list[Clause]:
    if not q.cve_text:
        return []
    # Spec: substring match on title and AI summary (a shorter id matches a longer one).
    needle = q.cve_text.upper()
    return [("(instr(upper(title), ?) > 0 OR instr(upper(coalesce(ai_summary, '')), ?) > 0)", [needle, needle])]


def _times(q: ArticleQuery) -> list[Clause]:
    out: list[Clause] = []
    if q.floor is not None:
        out.append(("published_at >= ?", [iso(q.floor)]))
    if q.since is not None:
        out.append((f"{q.time_field} >= ?", [iso(q.since)]))
    if q.until is not None:
        out.append((f"{q.time_field} <= ?", [iso(q.until)]))
    return out


# The Builder predicates of store.article_filters (the MongoDB builder has the same names).
BUILDERS: dict[str, Callable[[ArticleQuery], list[Clause]]] = {
    "archived": _archived, "severity_buckets": _severity_buckets, "cve_text": _cve_text, "time_window": _times,
    "text": lambda q: _text(q.text) if q.text is not None else [],
}


def _predicate(predicate: Generic, value: Any) -> Clause:
    """The clause of a generic predicate (store.article_filters) for a set value."""
    values = value if isinstance(value, tuple) else (value,)
    if isinstance(predicate, Equals):
        return _in(predicate.column, values) if isinstance(value, tuple) else (f"{predicate.column} = ?", [value])
    if isinstance(predicate, AnyOf):
        return _any_json(predicate.column, values)
    if isinstance(predicate, IsTrue):
        return (f"{predicate.sql or predicate.column} = ?", [int(value)])
    return (f"{predicate.column} >= ?", [value])


def _keyset(q: ArticleQuery) -> list[Clause]:
    if q.after is None:
        return []
    op = "<" if q.descending else ">"
    value, last_id = q.after
    return [(f"({q.sort_field}, id) {op} (?, ?)", [_sql_value(value), last_id])]


def article_where(q: ArticleQuery) -> Clause:
    """WHERE clause (without keyword) and parameters for every filter of ``q``."""
    return join(clauses(q, BUILDERS, _predicate) + _keyset(q))


def article_order(q: ArticleQuery) -> str:
    direction = "DESC" if q.descending else "ASC"
    return f"{q.sort_field} {direction}, id {direction}"


def join(clauses: list[Clause]) -> Clause:
    if not clauses:
        return "1", []
    params: list[Any] = []
    for _, p in clauses:
        params.extend(p)
    return " AND ".join(c for c, _ in clauses), params


# A ``since`` this recent bounds a page to a few days of records: found by ``modified`` and sorted, that
# costs those days, whatever the data's size. An older one matches most records: the page walks the page
# order's index (iocs_page_status, or iocs_type_page_status for one type) and stops after ``limit`` rows.
RECENT_SINCE = timedelta(days=2)


def walks_order(q: IocQuery, now: datetime) -> bool:
    """Whether a page of ``q`` should walk the page order's index rather than search by ``modified``."""
    return q.since is None or q.since < now - RECENT_SINCE


def _value_contains(needle: str, match: str | None) -> list[Clause]:
    """``store.value_search``: a prefix by the key below three characters, else the trigram index's ``match``
    (store.sqlite.value_index.Rarity; None: no index) then the value itself."""
    if prefix_only(needle):
        return [("value >= ? AND value < ?", [needle, prefix_end(needle)])]
    scan = ("instr(value, ?) > 0", [needle])
    if match is None:
        return [scan]
    return [("rowid IN (SELECT rowid FROM iocs_values WHERE iocs_values MATCH ?)", [match]), scan]


def counter_where(q: IocQuery) -> Clause:
    """The filters of a countable query (``store.ioc_counters.countable``) on the day and month counters."""
    filters = (("type", q.types), ("confidence", q.confidences), ("category", q.categories))
    return join([_in(column, values) for column, values in filters if values])


def by_trigrams(q: IocQuery) -> bool:
    """Whether ``q``'s rows can be found through the trigram index: a substring long enough for it."""
    return q.value_contains is not None and not prefix_only(q.value_contains)


def _since(q: IocQuery, off: str) -> Clause:
    """``modified`` at or after ``since``; for a poll of changes (``status_changes``) also an expiry in
    (since, now]: its effective modified is its ``valid_until`` (store.decay)."""
    assert q.since is not None
    if not q.status_changes:
        return f"{off}modified >= ?", [iso(q.since)]
    floor = iso(q.floor) if q.floor is not None else ""
    return (f"({off}modified >= ? OR ({off}valid_until > ? AND {off}valid_until <= ? AND +modified >= ?))",
            [iso(q.since), iso(q.since), iso(status_clock(q)), floor])


_STATUS_SQL = {"active": "(+revoked = 0 AND +valid_until > ?)", "expired": "(+revoked = 0 AND +valid_until <= ?)",
               "revoked": "(+revoked = 1)"}


def lifecycle_clauses(q: IocQuery) -> list[Clause]:
    """``statuses`` and ``min_score`` on the stored ``revoked`` and ``valid_until`` (store.decay), kept off
    the indexes (unary ``+``): the page order's walk stays the plan."""
    clauses: list[Clause] = []
    now = status_clock(q)
    if q.statuses and set(q.statuses) != set(STATUSES):
        chosen = [s for s in STATUSES if s in q.statuses]
        clauses.append(("(" + " OR ".join(_STATUS_SQL[s] for s in chosen) + ")",
                        [iso(now) for s in chosen if s != "revoked"]))
    if q.min_score:
        bounds = score_bounds(q, now)
        sql = " OR ".join(f"(+type IN ({', '.join('?' * len(types))}) AND +valid_until >= ?)" for types in bounds)
        clauses.append((f"(+revoked = 0 AND ({sql}))", [p for types, at in bounds.items() for p in (*types, at)]))
    return clauses


def score_bounds(q: IocQuery, now: datetime) -> dict[tuple[str, ...], str]:
    """``min_score`` as the least ``valid_until`` (ISO) per group of types of one half-life."""
    assert q.min_score
    groups: dict[str, list[str]] = {}
    for ioc_type in q.types or IOC_TYPES:
        groups.setdefault(iso(until_score(ioc_type, q.min_score, now)), []).append(ioc_type)
    return {tuple(types): at for at, types in groups.items()}
# The default filter: records on no warninglist (the column is NULL on rows from before it, and on unlisted ones).
LISTED_OUT = "warninglisted IS NULL"


def ioc_where(q: IocQuery, walk_order: bool = False, match: str | None = None) -> Clause:
    """WHERE clause for an IOC query, keyset on (first_seen, type, value) included, or on (date_added, type,
    value) for ``q.added_order`` (its two arms ORed; a page reads them as :func:`added_select`). ``walk_order``
    keeps the ``since`` bound off the ``modified`` indexes (SQLite's unary ``+``, sqlite.org/optoverview.html
    "Disqualifying WHERE Clause Terms Using Unary-'+'"), so the planner walks the page order's index.
    ``match``: substrings are found through the trigram index by this query (store.sqlite.value_index); the other
    terms are then kept off every index too, so the rows come from the trigram matches by rowid rather than
    from a walk of every record of the types checked against them."""
    clauses = _ioc_clauses(q, walk_order, match)
    if q.added_order or q.added_after is not None:
        arms = [join([(arm, params), *bounds]) for _, (arm, params), bounds in added_arms(q)]
        clauses.append(("(" + " OR ".join(f"({sql})" for sql, _ in arms) + ")", [p for _, ps in arms for p in ps]))
    if q.after is not None and not q.added_order:
        first_seen, ioc_type, value = q.after
        off = "+" if match is not None and by_trigrams(q) else ""
        clauses.append((f"({off}first_seen, type, value) > (?, ?, ?)", [iso(first_seen), ioc_type, value]))
    return join(clauses)


def _ioc_clauses(q: IocQuery, walk_order: bool, match: str | None) -> list[Clause]:
    """Every filter of ``q`` but its position in the page order."""
    trigrams = match is not None and by_trigrams(q)
    off = "+" if trigrams else ""
    clauses: list[Clause] = []
    # Several types in date_added order: kept off the (type, ...) indexes, so the pages walk the date indexes.
    type_off = "+" if q.added_order and len(q.types) > 1 else off
    for column, values in (("type", q.types), ("confidence", q.confidences),
                           ("source_category", q.categories), ("value", q.values), ("stix_id", q.stix_ids)):
        if values:
            clauses.append(_in((type_off if column == "type" else off) + column, values))
    for column, values in (("industries", q.industries), ("json_extract(doc, '$.sources')", q.sources),
                           ("json_extract(doc, '$.threat_actors')", q.threat_actors)):
        if values:
            clauses.append(_any_json(column, values))
    if q.value_contains:
        clauses += _value_contains(q.value_contains, match)
    if q.severities:
        clauses.append(("(" + " OR ".join(_bucket_sql(s, _IOC_SEVERITY) for s in q.severities) + ")", []))
    if not q.include_warninglisted:
        clauses.append((LISTED_OUT, []))
    if q.since is not None:
        clauses.append(_since(q, "+" if walk_order or trigrams else ""))
    return clauses + lifecycle_clauses(q)


# A record's TAXII date_added (store.decay.effective_modified) is its ``modified``, except an expired record's
# whose valid_until is after its modified: then its valid_until. Each arm holds the records of one case, found
# and ordered by its column's indexes ((column, type, value), or (type, column, value) for one type).
_CHANGED = "NOT (+revoked = 0 AND +valid_until <= ? AND +valid_until > +modified)"
_EXPIRED = "(+revoked = 0 AND valid_until <= ? AND valid_until > +modified)"


def added_arms(q: IocQuery) -> list[tuple[str, Clause, list[Clause]]]:
    """(column holding the date_added, which records it holds it for, ``added_after`` and ``after`` on it) of
    each arm of a query in date_added order. No expiry arm when the statuses leave expired records out; an
    expiry keeps to the lookback on ``modified`` (``floor``) as a poll of changes does (:func:`_since`)."""
    now = iso(status_clock(q))
    arms = [("modified", (_CHANGED, [now]))]
    if not q.statuses or "expired" in q.statuses:
        floor = [] if q.floor is None else [iso(q.floor)]
        arms.append(("valid_until", (_EXPIRED + " AND +modified >= ?" * len(floor), [now, *floor])))
    return [(column, arm, _added_bounds(q, column)) for column, arm in arms]


def _added_bounds(q: IocQuery, column: str) -> list[Clause]:
    """``added_after`` and the keyset position on ``column``, as one range its index seeks to."""
    start = added_start(q)
    if start is None:
        return []
    at, rest = start
    names = ", ".join([column, *(name for name, _ in rest)])
    return [(f"({names}) > ({', '.join('?' * (1 + len(rest)))})", [iso(at), *(v for _, v in rest)])]


def added_select(q: IocQuery, columns: str) -> Clause:
    """A page of ``q`` in date_added order: ``SELECT date_added, type, value, <columns>`` of each arm, merged
    by SQLite as a UNION ALL of two ordered index walks (no sort of the matching rows), ``LIMIT ? OFFSET ?``
    left for the caller's parameters."""
    common = _ioc_clauses(q, True, None)
    selects = [(f"SELECT {column}, type, value, {columns} FROM iocs WHERE {sql}", params)
               for column, arm, bounds in added_arms(q) for sql, params in (join([*common, arm, *bounds]),)]
    return (" UNION ALL ".join(sql for sql, _ in selects) + " ORDER BY 1, 2, 3 LIMIT ? OFFSET ?",
            [p for _, params in selects for p in params])
