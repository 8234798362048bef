"""Scores in SQL: a page's rows leave SQLite as their stored API form completed with score and status.

``store.decay.Scores`` orders every decay class's score bounds on one ladder of places, and each record keeps
its place (``iocs.decay_place``, :func:`store.decay.ladder_place`). Here the ladder becomes a balanced CASE
over that column, its cuts bound as parameters ``?1 .. ?n`` (the statement's text stays the same from one
second to the next, so SQLite keeps it prepared) and its leaves the suffixes ``,"score":N,"status":"..."}``:
about nine comparisons of a number per row, in SQLite's own loop, and no row is handled in Python. Measured
against the stored forms alone in scripts/bench_iocs.py (``ratio ioc_score_overhead``).
"""

from __future__ import annotations

import functools
from typing import Any

from store.decay import Scores
from store.records import iso


def _literal(leaf: tuple[int, str]) -> str:
    return f"""',"score":{leaf[0]},"status":"{leaf[1]}"}}'"""


@functools.lru_cache(maxsize=4)
def _ladder(leaves: tuple[tuple[int, str], ...]) -> str:
    """The CASE choosing ``leaves[k]`` for ``cuts[k - 1] <= decay_place < cuts[k]`` (``?k`` is ``cuts[k - 1]``)."""

    def node(lo: int, hi: int) -> str:
        if lo == hi:
            return _literal(leaves[lo])
        mid = (lo + hi + 1) // 2
        return f"CASE WHEN decay_place >= ?{mid} THEN {node(mid, hi)} ELSE {node(lo, mid - 1)} END"

    return node(0, len(leaves) - 1)


def completed_form(scores: Scores) -> tuple[str, list[Any]]:
    """(SQL expression, its parameters, to bind first) of a row's API form with its score and status.

    An expired record's ``modified`` reads as its ``valid_until`` when that is later: the expiry is the
    record's latest change (store.decay.effective_modified)."""
    now, open_form = len(scores.cuts) + 1, "substr(api_json, 1, length(api_json) - 1)"  # without its "}"
    head = (
        f"CASE WHEN +valid_until <= ?{now} AND +valid_until > +modified "
        f"""THEN replace({open_form}, '"modified":"' || modified, '"modified":"' || valid_until) """
        f"ELSE {open_form} END"
    )
    return f"CAST({head} || {_ladder(tuple(scores.leaves))} AS BLOB)", [*scores.cuts, iso(scores.now)]
