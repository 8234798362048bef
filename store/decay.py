"""An indicator's life: a 0-100 score that decays from its last report, ``valid_until`` and ``status``.

The model follows MISP's decaying models (a base score lowered by time since the last sighting) and
OpenCTI's indicator decay (``valid_until`` when the score crosses a threshold)::

    base  = min(100, 100 * c * k + 10 * log2(sources) + 5 * log2(1 + sightings))
    score(t) = base * 2 ** (-(t - last_seen) / half_life(type))
    valid_until = last_seen + half_life(type) * log2(base / threshold)

``c`` weighs the confidence (high 0.8, medium 0.6, low 0.4), ``k`` the kind of the reporting source
(government 1.0, commercial 0.9, community 0.75). ``valid_until`` depends on the record alone, so the
stores keep it as an indexed column computed at every write: a new report moves ``last_seen`` and with it
``valid_until``, and nothing is rewritten as time passes. Read at ``t`` the score is
``threshold * 2 ** ((valid_until - t) / half_life)`` (the same number for ``t >= last_seen``): one stored
time and the type suffice, so a page of stored API forms gets its scores without decoding a record.
A revoked record scores 0. ``valid_until`` may lie before ``last_seen``: a base below the threshold.
"""

from __future__ import annotations

import copy
import functools
import math
from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from store.ioctypes import REGISTRY

if TYPE_CHECKING:
    from config.settings import Settings
    from store.records import Ioc

STATUSES: tuple[str, ...] = ("active", "expired", "revoked")
# Decay classes (``IocTypeSpec.decay``) and their default half-lives in days.
DECAY_CLASSES: dict[str, float] = {"address": 10.0, "name": 30.0, "file": 180.0, "vulnerability": 365.0}
CONFIDENCE_WEIGHTS: dict[str, float] = {"high": 0.8, "medium": 0.6, "low": 0.4}
KIND_WEIGHTS: dict[str, float] = {"government": 1.0, "commercial": 0.9, "community": 0.75}
OTHER_KIND = 0.75
DEFAULT_THRESHOLD = 25.0
_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class DecayModel:
    """The half-lives by decay class (days) and the threshold below which an indicator is expired."""

    threshold: float = DEFAULT_THRESHOLD
    half_lives: dict[str, float] = field(default_factory=lambda: dict(DECAY_CLASSES))

    def half_life(self, ioc_type: str) -> float:
        """Days, for the type's decay class."""
        return self.half_lives[self.decay_class(ioc_type)]

    @staticmethod
    def decay_class(ioc_type: str) -> str:
        """The type's decay class (unknown types decay as names)."""
        spec = REGISTRY.get(ioc_type)
        return spec.decay if spec is not None else "name"

    @classmethod
    def from_settings(cls, settings: Settings) -> DecayModel:
        return cls(
            settings.decay_threshold,
            {
                "address": settings.decay_half_life_address_days,
                "name": settings.decay_half_life_name_days,
                "file": settings.decay_half_life_file_days,
                "vulnerability": settings.decay_half_life_vulnerability_days,
            },
        )


_ACTIVE: list[DecayModel] = [DecayModel()]


def configure(model: DecayModel) -> None:
    """Use ``model`` in this process (``store.factory.make_stores``, from the settings). One model per
    process: stored ``valid_until`` and the scores read from it must agree."""
    _ACTIVE[0] = model
    _ladder.cache_clear()
    scores_at.cache_clear()


def model() -> DecayModel:
    return _ACTIVE[0]


def base_parts(ioc: Ioc) -> list[tuple[str, float]]:
    """The base score's terms, explained: (what, points)."""
    kind = KIND_WEIGHTS.get(ioc.source_category, OTHER_KIND)
    parts = [
        (
            f"confidence {ioc.confidence} from a {ioc.source_category} source",
            100 * CONFIDENCE_WEIGHTS.get(ioc.confidence, 0.4) * kind,
        )
    ]
    sources = max(1, len(ioc.sources))
    if sources > 1:
        parts.append((f"reported by {sources} independent sources", 10 * math.log2(sources)))
    if ioc.sightings:
        parts.append((f"seen by {ioc.sightings} account(s)", 5 * math.log2(1 + ioc.sightings)))
    return parts


def base_score(ioc: Ioc) -> float:
    return min(100.0, sum(points for _, points in base_parts(ioc)))


def _ms(value: datetime) -> datetime:
    """``value`` to the millisecond (``store.records.ms``; records import this module)."""
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def valid_until(ioc: Ioc, m: DecayModel | None = None) -> datetime:
    """When the score falls below the threshold (before ``last_seen`` when it starts below), to the
    millisecond from ``last_seen`` to the millisecond: the time the stores keep, so a record read back
    gives the same one, and a TAXII position computed from it is the stored column's (taxii.page_query)."""
    m = m or model()
    base = max(base_score(ioc), 0.01)
    return _ms(_ms(ioc.last_seen) + timedelta(days=m.half_life(ioc.type) * math.log2(base / m.threshold)))


def clock(now: datetime) -> datetime:
    """The time statuses are read at: ``now`` to the whole second, so a page, its count and its
    cached copy agree within a second."""
    return now.replace(microsecond=0)


def instant(now: datetime) -> datetime:
    """The time a poll by date (a TAXII page, an IOC list with ``since``) reads statuses at: ``now`` to the
    millisecond, the stores' precision, so the answer holds every write and every expiry up to the request.
    At the whole second (:func:`clock`) a write after the second was served and an expiry between the two
    was not: the write's date_added or ``modified``, passed back as ``added_after`` (TAXII 2.1 section
    3.4.1) or ``since``, lay after that expiry, dated at its ``valid_until`` (:func:`effective_modified`),
    and it was never served."""
    return _ms(now)


def read_time(now: datetime, poll: bool) -> datetime:
    """The time a request's statuses are read at: a poll by date at its millisecond (:func:`instant`), any
    other list or export at the status clock (:func:`clock`)."""
    return instant(now) if poll else clock(now)


# The score ladder: one ordered list of places for every decay class (Scores). Places are whole milliseconds,
# integers: SQLite compares two integers on its fastest path (a REAL place cost a ladder walk about 4% more).
LADDER_CLASSES: tuple[str, ...] = tuple(DECAY_CLASSES)
_BLOCK = 10**14  # milliseconds between two classes' blocks: a stored time is about 1.8e12 after the epoch
REVOKED_PLACE = _BLOCK * (len(LADDER_CLASSES) + 1)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_DAY_MS = 86_400_000


def _epoch_ms(t: datetime) -> int:
    """Milliseconds since the epoch of ``t``, to the millisecond below, as ``store.records.iso`` stores it."""
    return (t - _EPOCH) // _MS


def ladder_place(ioc_type: str, until: datetime, revoked: bool) -> int:
    """A record's place on the score ladder: its decay class's block plus its ``valid_until`` in milliseconds
    (SQLite keeps it beside ``valid_until``, ``iocs.score_place``); revoked records stand above every block."""
    if revoked:
        return REVOKED_PLACE
    return _BLOCK * (1 + LADDER_CLASSES.index(DecayModel.decay_class(ioc_type))) + _epoch_ms(until)


class Scores:
    """Every score and status at one instant, as one ladder over records' places (:func:`ladder_place`).

    A record of half-life ``H`` scores at least ``s`` exactly when its ``valid_until`` is at or after
    ``now + H * log2((s - 0.5) / threshold)`` (the score rounded half up), and is expired when it is at or
    before ``now``. Each decay class's bounds, shifted to its block, make one ascending list of cuts, and a
    record's (score, status) is the leaf after the cuts at or below its place: one bisection, with no time
    parsed nor power computed per record. SQLite walks the same cuts in SQL (``store.sqlite.scores``), so a
    page's rows leave the database with their score (``ratio ioc_score_overhead`` in scripts/bench_iocs.py).
    The leaves do not depend on ``now``; the cuts do. Stored times are whole milliseconds, so each cut is the
    first whole millisecond at or after its bound, and "now" cuts one millisecond after ``now``.
    """

    def __init__(self, now: datetime, m: DecayModel) -> None:
        self.model = m
        # Each cut as (constant, moves with now): a class's block and the revoked place stand still, its bounds
        # are ``today`` plus a constant. The marks and leaves depend on the model alone (the SQL's text).
        self.leaves: list[tuple[int, str]] = [(0, "expired")]
        marks: list[tuple[int, bool]] = []
        for i, name in enumerate(LADDER_CLASSES):
            block = _BLOCK * (1 + i)
            marks.append((block, False))
            self.leaves.append((0, "expired"))
            for offset, score, status in self._steps(m.half_lives[name]):
                marks.append((block + offset, True))
                self.leaves.append((score, status))
        marks.append((REVOKED_PLACE, False))
        self.leaves.append((0, "revoked"))
        self.marks: tuple[tuple[int, bool], ...] = tuple(marks)
        self._read_at(now)

    def _read_at(self, now: datetime) -> None:
        """Place the cuts that move with time at ``now``."""
        self.now, self.today = now, _epoch_ms(now)
        self.cuts: list[int] = [c + self.today if moves else c for c, moves in self.marks]

    def _steps(self, half_life: float) -> list[tuple[int, int, str]]:
        """(milliseconds after now, score, status from there on) of one class, ascending: a bound per score,
        and "now" itself, after which a record is active (at or before it, expired)."""
        bounds = [(math.ceil(half_life * _DAY_MS * math.log2((s - 0.5) / self.model.threshold)), s)
                  for s in range(1, 101)]
        steps, score, status = [], 0, "expired"
        for offset, step in sorted([*bounds, (1, -1)]):
            score, status = (score, "active") if step < 0 else (max(score, step), status)
            steps.append((offset, score, status))
        return steps

    def at(self, now: datetime) -> Scores:
        """The same ladder read at ``now``: only the cuts that move with time move, so a poll read at its
        millisecond (:func:`instant`) costs no new steps."""
        moved = copy.copy(self)
        moved._read_at(now)
        return moved

    def leaf(self, place: int) -> tuple[int, str]:
        return self.leaves[bisect_right(self.cuts, place)]

    def score(self, ioc_type: str, valid_until: datetime) -> int:
        return self.leaf(ladder_place(ioc_type, valid_until, False))[0]


@functools.lru_cache(maxsize=1)
def _ladder() -> Scores:
    """The model's step tables, built once (read at the epoch): :func:`scores_at` moves them to an instant."""
    return Scores(_EPOCH, model())


@functools.lru_cache(maxsize=8)
def scores_at(now: datetime) -> Scores:
    """The step tables at ``now`` (kept for the few instants a process reads at, a second apart)."""
    return _ladder().at(now)


def score_at(ioc_type: str, until: datetime, now: datetime) -> int:
    """The score at ``now`` of a record of ``ioc_type`` valid until ``until`` (:class:`Scores`)."""
    return scores_at(now).score(ioc_type, until)


def score(ioc: Ioc, now: datetime) -> int:
    return 0 if ioc.revoked else score_at(ioc.type, valid_until(ioc), now)


def status(ioc: Ioc, now: datetime) -> str:
    if ioc.revoked:
        return "revoked"
    return "expired" if now >= valid_until(ioc) else "active"


def effective_modified(ioc: Ioc, now: datetime) -> datetime:
    """When the record last changed as a poller sees it: expiry is a change at ``valid_until``."""
    until = valid_until(ioc)
    return until if not ioc.revoked and now >= until > ioc.modified else ioc.modified


def until_score(ioc_type: str, minimum: float, now: datetime, m: DecayModel | None = None) -> datetime:
    """The earliest ``valid_until`` of a record of ``ioc_type`` that scores at least ``minimum`` at ``now``:
    the ``min_score`` filter as a bound on the stored column."""
    m = m or model()
    return now + timedelta(days=m.half_life(ioc_type) * math.log2(max(minimum - 0.5, 0.01) / m.threshold))


def explain(ioc: Ioc, now: datetime) -> tuple[int, list[tuple[str, int]]]:
    """(score, factors whose points add up to it): the base's terms, the cap, the decay since the last
    report, a revocation. What GET /api/v1/lookup shows as the score's explanation."""
    factors = [(what, int(round(points))) for what, points in base_parts(ioc)]
    total = score(ioc, now)
    if ioc.revoked:
        factors.append((f"revoked: {ioc.revoked_reason}", -sum(p for _, p in factors)))
        return total, factors
    days = (now - ioc.last_seen).total_seconds() / _DAY
    half = model().half_life(ioc.type)
    factors.append(
        (f"last reported {days:.0f} day(s) ago; {ioc.type} half-life {half:g} days", total - sum(p for _, p in factors))
    )
    return total, factors
