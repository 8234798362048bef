"""Scores in SQL: a page's rows leave SQLite as their stored API form completed with score and status.

``store.decay.Scores`` orders every decay class's score bounds on one ladder of places, and each record keeps
its place (``iocs.score_place``, :func:`store.decay.ladder_place`). Here the ladder becomes a balanced CASE
over that column, each cut that moves with time written as ``?1 + <constant>`` with ``?1`` the time read at in
milliseconds (SQLite computes such a constant expression once per statement, and the statement's text stays
the same from one second to the next, so it stays prepared and binds one number rather than 400), and its
leaves the suffixes ``,"score":N,"status":"..."}``: about nine comparisons of two integers per row, in
SQLite's own loop, and no row is handled in Python. Measured against the stored forms alone in
scripts/bench_iocs.py (``ratio ioc_score_overhead``).

The stored form (:func:`stored_form`) is kept without its closing brace and with ``modified`` last, so a row
costs one concatenation: no ``substr`` cuts the brace off, and only an expired row's leaf rewrites the
fixed-width date at the end rather than searching the form for it.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

import orjson

from store.decay import Scores
from store.records import Ioc, iso

# ``<modified>"`` at the stored form's end: iso() writes every date in the same width, then the closing quote.
_MODIFIED_TAIL = len(iso(datetime(2026, 1, 1, tzinfo=UTC))) + 1
_EXPIRY_REWRITE = (
    f"CASE WHEN +valid_until > +modified THEN substr(api_json, 1, length(api_json) - {_MODIFIED_TAIL}) "
    """|| valid_until || '"' ELSE api_json END"""
)


def stored_form(ioc: Ioc) -> bytes:
    """``ioc``'s stored API form (``Ioc.stored_api``), ``modified`` last, without the closing brace the page's
    SQL appends with the score and status (:func:`completed_form`)."""
    return orjson.dumps(ioc.stored_api())[:-1]


def _leaf(leaf: tuple[int, str]) -> str:
    """The completed form at one leaf. An expired record's ``modified`` reads as its ``valid_until`` when that
    is later: the expiry is the record's latest change (store.decay.effective_modified)."""
    form = _EXPIRY_REWRITE if leaf[1] == "expired" else "api_json"
    return f"""{form} || ',"score":{leaf[0]},"status":"{leaf[1]}"}}'"""


@functools.lru_cache(maxsize=4)
def _ladder(leaves: tuple[tuple[int, str], ...], marks: tuple[tuple[int, bool], ...]) -> str:
    """The CASE choosing ``leaves[k]`` for ``cuts[k - 1] <= score_place < cuts[k]``, a cut being ``marks[k - 1]``'s
    constant, plus ``?1`` when it moves with time."""

    def cut(k: int) -> str:
        constant, moves = marks[k - 1]
        return f"?1 + {constant}" if moves else str(constant)

    def node(lo: int, hi: int) -> str:
        if lo == hi:
            return _leaf(leaves[lo])
        mid = (lo + hi + 1) // 2
        return f"CASE WHEN score_place >= {cut(mid)} THEN {node(mid, hi)} ELSE {node(lo, mid - 1)} END"

    return f"CAST({node(0, len(leaves) - 1)} AS BLOB)"


@functools.lru_cache(maxsize=8)
def _form(scores: Scores) -> str:
    """The one text of ``scores``' expression, kept while ``store.decay.scores_at`` keeps ``scores``: a statement
    built from the same string object hashes it once (the sqlite3 module's statement cache is keyed by text)."""
    return _ladder(tuple(scores.leaves), scores.marks)


def completed_form(scores: Scores) -> tuple[str, list[Any]]:
    """(SQL expression, its parameters, to bind first) of a row's API form with its score and status."""
    return _form(scores), [scores.today]


@functools.lru_cache(maxsize=64)
def with_columns(template: str, slot: str, columns: str) -> str:
    """``template`` with ``columns`` in place of ``slot``: one string object per (statement shape, form), so the
    sqlite3 module's statement cache finds a 50 KB statement by its cached hash."""
    return template.replace(slot, columns)
