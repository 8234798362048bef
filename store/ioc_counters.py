"""IOC counters kept as records change: what GET /api/v1/iocs/stats and the IOC list totals read instead of
scanning every record of the window. Pure: both backends keep the same counters (store/sqlite,
store/mongo) and answer from them with these functions.

Each record counts once, in the UTC day and hour of its ``modified``:

- ``("d", day, type, confidence, category)``: records per day and filter combination (totals, the
  ``by_*`` groups, and list totals filtered by type, confidence or category);
- ``("s", day, source)``: records per day that name ``source`` (top sources);
- ``("h", hour)``: records per hour (the hourly and daily series);
- ``("m", month, type, confidence, category)``: the day counters summed per UTC month, so a window's
  whole days cost its first partial month's days plus one counter set per month (about 43 sets for a
  year) instead of one per day;
- ``("hg", hour, type, confidence, category)`` and ``("hs", hour, source)``: the day and source counters
  per UTC hour, for the whole hours of a window's first partial day.

A write moves a record's counts from its old day, hour and values to its new ones. A window starts at any
instant, so its first (partial) day is counted from the records themselves, by the ``modified`` index:
the cost of a window is its whole days' counters plus one day of records, whatever the data's size.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import NamedTuple

from store.base import IocStats
from store.query import IocQuery
from store.records import Ioc, iso

CounterKey = tuple[str, ...]
DAY, SOURCE, HOUR, MONTH, HOUR_GROUP, HOUR_SOURCE = "d", "s", "h", "m", "hg", "hs"
# A count the counters cannot answer stops here (a lower bound then), as the articles' planned count does.
ESTIMATE_CAP = 10_000


def contributions(ioc: Ioc) -> list[CounterKey]:
    """The counters ``ioc`` adds one to: none when it is warninglisted, because the counters answer the
    default lists and stats, which leave those records out (``IocQuery.include_warninglisted``)."""
    if ioc.warninglisted:
        return []
    stamp = iso(ioc.modified)
    day, hour = stamp[:10], stamp[:13]
    return [
        (DAY, day, ioc.type, ioc.confidence, ioc.source_category),
        (MONTH, day[:7], ioc.type, ioc.confidence, ioc.source_category),
        (HOUR_GROUP, hour, ioc.type, ioc.confidence, ioc.source_category),
        (HOUR, hour),
        *(
            (kind, bucket, source)
            for source in dict.fromkeys(ioc.sources)
            for kind, bucket in ((SOURCE, day), (HOUR_SOURCE, hour))
        ),
    ]


def tally(deltas: Counter[CounterKey], old: Ioc | None, new: Ioc | None) -> None:
    """Add to ``deltas`` the change of a record from ``old`` to ``new`` (None: absent)."""
    for key in contributions(old) if old is not None else ():
        deltas[key] -= 1
    for key in contributions(new) if new is not None else ():
        deltas[key] += 1


def changed(deltas: Counter[CounterKey]) -> list[tuple[CounterKey, int]]:
    """The non-zero deltas (a rewrite that moves nothing writes no counter)."""
    return [(key, n) for key, n in deltas.items() if n]


def first_whole_day(since: datetime) -> datetime:
    """The first midnight at or after ``since``: counters serve from here, records before it."""
    midnight = since.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight if midnight == since else midnight + timedelta(days=1)


def first_whole_hour(since: datetime) -> datetime:
    """The first whole hour at or after ``since``: counters serve from here, records before it."""
    hour = since.replace(minute=0, second=0, microsecond=0)
    return hour if hour == since else hour + timedelta(hours=1)


class Span(NamedTuple):
    """Which counters serve a window's whole hours, days and months (``counter_span``)."""

    hour: str  # hour counters in [hour, hour_end)
    hour_end: str
    day: str  # day counters in [day, day_end)
    day_end: str
    month: str  # month counters from here


def counter_span(since: datetime | None) -> Span:
    """The counters of a window from ``since``: the whole hours of its first partial day, the days of its
    first partial month, then whole months (``since`` None: every month). Before the first whole hour,
    the records themselves are counted."""
    if since is None:
        return Span("", "", "", "", "")
    day = first_whole_day(since)
    month = day if day.day == 1 else (day.replace(day=1) + timedelta(days=32)).replace(day=1)
    return Span(iso(first_whole_hour(since))[:13], iso(day)[:13], iso(day)[:10], iso(month)[:10], iso(month)[:7])


def countable(query: IocQuery) -> bool:
    """Whether the counters can count ``query``: filters on type, confidence, category and ``since`` only.
    They count records by when they changed, not by status or score (those move with the clock), so a
    lifecycle filter (the lists' default ``status=active`` among them) is counted on the records, up to the
    estimate's cap (``IocStore.estimate_iocs``)."""
    return not (
        query.industries
        or query.values
        or query.value_contains
        or query.stix_ids
        or query.added_after is not None
        or query.sources  # the counters do not split by sources, actors or severity
        or query.threat_actors
        or query.severities
        or query.lifecycle
        or query.include_warninglisted
    )


def day_matches(query: IocQuery, ioc_type: str, confidence: str, category: str) -> bool:
    """Whether a ``("d", ...)`` counter's records match the filters of a countable ``query``."""
    return (
        (not query.types or ioc_type in query.types)
        and (not query.confidences or confidence in query.confidences)
        and (not query.categories or category in query.categories)
    )


def _sorted(counts: Counter[str]) -> dict[str, int]:
    return {k: n for k, n in sorted(counts.items()) if n > 0}


def combine(
    head: IocStats,
    days: Iterable[tuple[str, str, str, int]],
    sources: Iterable[tuple[str, int]],
    hours: Iterable[tuple[str, int]],
    top: int,
) -> IocStats:
    """The window's stats: ``head`` (its partial first day, counted from records, every source listed)
    plus the whole days' counters, summed per (type, confidence, category), per source and per hour."""
    by_type, by_confidence, by_category = Counter(head.by_type), Counter(head.by_confidence), Counter(head.by_category)
    total = head.total
    for ioc_type, confidence, category, n in days:
        by_type[ioc_type] += n
        by_confidence[confidence] += n
        by_category[category] += n
        total += n
    named = Counter(dict(head.top_sources))
    for source, n in sources:
        named[source] += n
    hourly = Counter(dict(head.hourly))
    for hour, n in hours:
        hourly[hour] += n
    ranked = sorted(((s, n) for s, n in named.items() if n > 0), key=lambda sn: (-sn[1], sn[0]))
    return IocStats(
        total=total,
        by_type=_sorted(by_type),
        by_confidence=_sorted(by_confidence),
        by_category=_sorted(by_category),
        top_sources=ranked[:top],
        hourly=sorted((h, n) for h, n in hourly.items() if n > 0),
    )
