"""IOC counters kept as records change: what GET /api/v1/iocs/stats and the IOC list totals read instead of
scanning every record of the window. Pure: both backends keep the same counters (store/sqlite,
store/mongo) and answer from them with these functions.

Each record counts once, in the UTC day and hour of its ``modified``:

- ``("d", day, type, confidence, category)``: records per day and filter combination (totals, the
  ``by_*`` groups, and list totals filtered by type, confidence or category);
- ``("s", day, source)``: records per day that name ``source`` (top sources);
- ``("h", hour)``: records per hour (the hourly series, and the daily one's first days);
- ``("dt", day)``: records per day (the daily series after its first days: a year's series reads 365 of
  these instead of up to 8,760 hour counters);
- ``("m", month, type, confidence, category)``: the day counters summed per UTC month, so a window's
  whole days cost its first partial month's days plus one counter set per month (about 43 sets for a
  year) instead of one per day;
- ``("ms", month, source)``: the source counters summed per UTC month (top sources: a year reads about
  13 months of sources instead of 365 days of them);
- ``("hg", hour, type, confidence, category)`` and ``("hs", hour, source)``: the day and source counters
  per UTC hour, for the whole hours of a window's first partial day.

A write moves a record's counts from its old day, hour and values to its new ones. A window starts at any
instant, so the stats count from the whole hour nearest its start and correct by the records between the
two, by the ``modified`` index (``window_edge``): the cost of a window is its counters plus at most half an
hour of records.
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
MONTH_SOURCE, DAY_TOTAL = "ms", "dt"
# A window's series is per hour from its start through this many midnights, then per day (``coarse``):
# the hourly series of a window of up to a day (exporters.ioc_stats) needs hours, longer ones need days.
HOURLY_DAYS = 2
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
        (DAY_TOTAL, day),
        *(
            (kind, bucket, source)
            for source in dict.fromkeys(ioc.sources)
            for kind, bucket in ((SOURCE, day), (HOUR_SOURCE, hour), (MONTH_SOURCE, day[:7]))
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


def derived(counters: Iterable[tuple[CounterKey, int]]) -> Counter[CounterKey]:
    """The month source and day total counters summed from the day source and hour counters among
    ``counters``: what counters from before those two kinds add, without reading a record."""
    deltas: Counter[CounterKey] = Counter()
    for key, n in counters:
        if key[0] == SOURCE:
            deltas[(MONTH_SOURCE, key[1][:7], key[2])] += n
        elif key[0] == HOUR:
            deltas[(DAY_TOTAL, key[1][:10])] += n
    return deltas


def series_days(since: datetime) -> str:
    """The first day (``YYYY-MM-DD``) a window's series counts per day; its hours before are counted per hour."""
    return iso(first_whole_day(since) + timedelta(days=HOURLY_DAYS))[:10]


def coarse(series: Iterable[tuple[str, int]], since: datetime) -> list[tuple[str, int]]:
    """An hourly series of a window from ``since`` as the stats give it: per hour before ``series_days``,
    per day from there."""
    first_day = series_days(since)
    counts: Counter[str] = Counter()
    for label, n in series:
        counts[label if label < first_day else label[:10]] += n
    return sorted(counts.items())


class Edge(NamedTuple):
    """Where a window's counters start and which records correct them (``window_edge``)."""

    since: datetime  # the window's start
    start: datetime  # its counters from this whole hour
    low: datetime  # the records modified in [low, high) ...
    high: datetime
    sign: int  # ... added (1: start is after since) or taken away (-1: start is before since)


def window_edge(since: datetime) -> Edge:
    """The whole hour nearest ``since``: a window's first partial hour costs at most half an hour of records
    (the stats' cost grows with the records per hour, the busiest hours being the latest)."""
    hour = since.replace(minute=0, second=0, microsecond=0)
    if since - hour <= timedelta(minutes=30):
        return Edge(since, hour, hour, since, -1)
    after = hour + timedelta(hours=1)
    return Edge(since, after, since, after, 1)


def signed(stats: IocStats, sign: int) -> IocStats:
    """``stats`` with every count times ``sign`` (records to take away from counters: ``window_edge``)."""
    return IocStats(
        total=stats.total * sign,
        by_type={k: n * sign for k, n in stats.by_type.items()},
        by_confidence={k: n * sign for k, n in stats.by_confidence.items()},
        by_category={k: n * sign for k, n in stats.by_category.items()},
        top_sources=[(k, n * sign) for k, n in stats.top_sources],
        hourly=[(k, n * sign) for k, n in stats.hourly],
    )


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
    top: int | None,
) -> IocStats:
    """The window's stats: ``head`` (its edge's records, ``window_edge``, every source listed, signed)
    plus the whole hours' counters, summed per (type, confidence, category), per source and per hour or day
    (``coarse``)."""
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
