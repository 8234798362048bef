"""The IOC counters on MongoDB (``ioc_counters``; see ``store.ioc_counters``): ``$inc`` upserts after each
IOC write that won its compare-and-swap (store.mongo.iocs), read by the stats and the list totals.

One document per counter: ``k`` its kind (``d``, ``m``, ``s``, ``h``, ...), ``b`` its day, month or hour,
``t``/``c``/``g`` the type, confidence and category of a day or month counter, ``src`` the source of a
source counter, ``n`` the count. Databases from before the counters (or the month counters) get them once
at open (``backfill``); those from before the month source and day total counters get them summed from the
day source and hour counters, without reading a record.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from pymongo import UpdateOne
from pymongo.asynchronous.collection import AsyncCollection

from store.base import IocStats
from store.ioc_counters import (
    DAY,
    DAY_TOTAL,
    HOUR,
    HOUR_GROUP,
    HOUR_SOURCE,
    MONTH,
    MONTH_SOURCE,
    SOURCE,
    CounterKey,
    Edge,
    changed,
    combine,
    counter_span,
    day_matches,
    derived,
    series_days,
    tally,
)
from store.mongo.documents import Doc, from_ioc
from store.query import IocQuery

Collection = AsyncCollection[dict[str, Any]]
BATCH = 1_000
_GROUP, _SOURCE = ("b", "t", "c", "g"), ("b", "src")
_FIELDS = {
    DAY: _GROUP,
    MONTH: _GROUP,
    HOUR_GROUP: _GROUP,
    SOURCE: _SOURCE,
    HOUR_SOURCE: _SOURCE,
    MONTH_SOURCE: _SOURCE,
}
DONE_ID = "ioc_counters"  # meta document whose value is the counters' version once they hold every record
VERSION = 4  # 2: with the month counters, 3: with the hour counters, 4: month sources and day totals
_SUMMED = 3  # from this version on, the newer counters are summed from the stored ones (``derived``)


def _fields(key: CounterKey) -> Doc:
    return {"k": key[0], **dict(zip(_FIELDS.get(key[0], ("b",)), key[1:], strict=True))}


async def apply(coll: Collection, deltas: Counter[CounterKey]) -> None:
    """Add ``deltas`` to the counters."""
    ops = [
        UpdateOne({"_id": "|".join(key)}, {"$inc": {"n": n}, "$setOnInsert": _fields(key)}, upsert=True)
        for key, n in changed(deltas)
    ]
    for start in range(0, len(ops), BATCH):
        await coll.bulk_write(ops[start : start + BATCH], ordered=False)


async def _sums(coll: Collection, kind: str, bucket: Doc, by: dict[str, str]) -> list[Doc]:
    pipeline: list[Doc] = [{"$match": {"k": kind, "b": bucket}}, {"$group": {"_id": by, "n": {"$sum": "$n"}}}]
    return [d async for d in await coll.aggregate(pipeline)]


async def _days(coll: Collection, since: datetime | None) -> list[tuple[str, str, str, int]]:
    """The whole hours' (type, confidence, category, n) from ``since``: the first partial day's hour
    counters, the first partial month's day counters, then the month counters (store.ioc_counters.counter_span)."""
    span = counter_span(since)
    by = {"t": "$t", "c": "$c", "g": "$g"}
    rows = [
        *await _sums(coll, HOUR_GROUP, {"$gte": span.hour, "$lt": span.hour_end}, by),
        *await _sums(coll, DAY, {"$gte": span.day, "$lt": span.day_end}, by),
        *await _sums(coll, MONTH, {"$gte": span.month}, by),
    ]
    return [(d["_id"]["t"], d["_id"]["c"], d["_id"]["g"], int(d["n"])) for d in rows]


async def stats(coll: Collection, head: IocStats, edge: Edge, top: int) -> IocStats:
    """``head`` (the records of the window's ``edge``, signed) plus the counters from its whole hour."""
    span, days = counter_span(edge.start), series_days(edge.since)
    named = [
        *await _sums(coll, HOUR_SOURCE, {"$gte": span.hour, "$lt": span.hour_end}, {"src": "$src"}),
        *await _sums(coll, SOURCE, {"$gte": span.day, "$lt": span.day_end}, {"src": "$src"}),
        *await _sums(coll, MONTH_SOURCE, {"$gte": span.month}, {"src": "$src"}),
    ]
    sources = [(d["_id"]["src"], int(d["n"])) for d in named]
    series = {"$or": [{"k": HOUR, "b": {"$gte": span.hour, "$lt": days}}, {"k": DAY_TOTAL, "b": {"$gte": days}}]}
    hours = [(d["b"], int(d["n"])) async for d in coll.find(series)]
    return combine(head, await _days(coll, edge.start), sources, hours, top)


async def count_days(coll: Collection, query: IocQuery) -> int:
    """The whole days' part of a countable query's count (from the first midnight after ``since``)."""
    return sum(n for t, c, g, n in await _days(coll, query.since) if day_matches(query, t, c, g))


async def rebuild(iocs: Collection, coll: Collection) -> None:
    """Count every record again from nothing (a re-enrichment, or a database from before the counters)."""
    await coll.delete_many({})
    deltas: Counter[CounterKey] = Counter()
    fields = {
        "type": 1,
        "value": 1,
        "confidence": 1,
        "source_category": 1,
        "modified": 1,
        "sources": 1,
        "feed_name": 1,
        "first_seen": 1,
        "last_seen": 1,
        "warninglists": 1,
    }
    async for doc in iocs.find({}, fields):
        tally(deltas, None, from_ioc(doc))
    await apply(coll, deltas)


async def backfill(iocs: Collection, coll: Collection, meta: Collection) -> None:
    """Build the counters once (run by ``open``)."""
    done = await meta.find_one({"_id": DONE_ID})
    version = 0 if done is None else int(done.get("value", 0))
    if version >= VERSION:
        return
    if version >= _SUMMED:
        await _sum_counters(coll)
    else:
        await rebuild(iocs, coll)
    await meta.update_one({"_id": DONE_ID}, {"$set": {"value": VERSION}}, upsert=True)


async def _sum_counters(coll: Collection) -> None:
    """Add the month source and day total counters from the day source and hour counters."""
    await coll.delete_many({"k": {"$in": [MONTH_SOURCE, DAY_TOTAL]}})
    stored = coll.find({"k": {"$in": [SOURCE, HOUR]}})
    await apply(
        coll, derived([((d["k"], d["b"], *([d["src"]] if "src" in d else [])), int(d["n"])) async for d in stored])
    )
