"""Scores in SQL: a page's rows leave SQLite as their stored API form completed with score and status.

``store.decay.Scores`` orders every decay class's score bounds on one ladder of places, and each record keeps
its place (``iocs.score_place``, :func:`store.decay.ladder_place`). Here the ladder becomes a balanced CASE
over that column, its cuts bound as parameters ``?1 .. ?n`` (the statement's text stays the same from one
second to the next, so SQLite keeps it prepared) and its leaves the suffixes ``,"score":N,"status":"..."}``:
about nine comparisons of a number per row, in SQLite's own loop, and no row is handled in Python. Measured
against the stored forms alone in scripts/bench_iocs.py (``ratio ioc_score_overhead``).

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
def _ladder(leaves: tuple[tuple[int, str], ...]) -> str:
    """The CASE choosing ``leaves[k]`` for ``cuts[k - 1] <= score_place < cuts[k]`` (``?k`` is ``cuts[k - 1]``)."""

    def node(lo: int, hi: int) -> str:
        if lo == hi:
            return _leaf(leaves[lo])
        mid = (lo + hi + 1) // 2
        return f"CASE WHEN score_place >= ?{mid} THEN {node(mid, hi)} ELSE {node(lo, mid - 1)} END"

    return node(0, len(leaves) - 1)


def completed_form(scores: Scores) -> tuple[str, list[Any]]:
    """(SQL expression, its parameters, to bind first) of a row's API form with its score and status."""
    return f"CAST({_ladder(tuple(scores.leaves))} AS BLOB)", list(scores.cuts)
