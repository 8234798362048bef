"""IOC writes and statistics on MongoDB.

Merging must give exactly ``codec.merge_ioc`` (the SQLite backend's rule): a new record is stored as it
comes, a known one is merged (first_seen never moves later, lists unioned and sorted, scalars from the
newer report), both bounded to the most recent links and counted from the link relation
(``store.mongo.ioc_links``), whose upserts run first and tell each writer exactly which links it added.
Update operators cannot express "as is when new, merged and sorted when known", so each round reads the
stored records, merges in Python, and writes back with a compare-and-swap on ``_v`` (a token replaced by
every write): inserts that meet a duplicate ``_id`` and replaces whose ``_v`` moved lost a race with a
concurrent run and are merged again in the next round. Merges commute, so any interleaving of concurrent
runs ends in the same record.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from pymongo import InsertOne, ReplaceOne, UpdateOne
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import BulkWriteError

from store.base import IocStats, StoreError
from store.codec import bounded, counted, fold_iocs, merge_ioc, revoked
from store.ioc_counters import CounterKey, tally
from store.mongo import ioc_counters
from store.mongo.documents import Doc, from_ioc, ioc_doc, ioc_key
from store.mongo.ioc_links import Added, write_links
from store.mongo.queries import LISTED_OUT
from store.records import Ioc
from store.stixids import object_id
from store.value_search import trigrams

MAX_ROUNDS = 20
BACKFILL_BATCH = 1_000
_DUPLICATE_KEY = 11000
Collection = AsyncCollection[dict[str, Any]]
Op = InsertOne[dict[str, Any]] | ReplaceOne[dict[str, Any]]


def fold(incoming: Iterable[Ioc]) -> dict[str, Ioc]:
    """One record per document key, later reports of the batch merged into earlier ones (``codec.fold_iocs``)."""
    return {ioc_key(*key): ioc for key, ioc in fold_iocs(incoming).items()}


async def replace_all(coll: Collection, links: Collection, counters: Collection, incoming: Iterable[Ioc]) -> int:
    """Write every record as given, then remove the records not among them (``IocStore.replace_iocs``),
    and count them again."""
    folded = fold(incoming)
    token = uuid.uuid4().hex
    await links.delete_many({})
    added = await write_links(links, folded)
    ops = [ReplaceOne({"_id": key}, ioc_doc(bounded(counted(ioc, None, added.get(key, {}))), token), upsert=True)
           for key, ioc in folded.items()]
    for start in range(0, len(ops), BACKFILL_BATCH):
        await coll.bulk_write(ops[start:start + BACKFILL_BATCH], ordered=False)
    await coll.delete_many({"_id": {"$nin": list(folded)}})
    await ioc_counters.rebuild(coll, counters)
    return len(folded)


@dataclass(frozen=True, slots=True)
class Write:
    """One planned write: the record's key, the stored record it replaces (None: an insert), the new one."""

    key: str
    held: Ioc | None
    record: Ioc


def plan(pending: dict[str, Ioc], stored: dict[str, Doc], added: Added) -> list[Write]:
    """The writes of one round. A record's count grows by the links this writer added, onto the stored
    count it replaces by compare-and-swap: a lost race re-reads the count, so every writer's links are
    counted once."""
    writes: list[Write] = []
    for key, new in pending.items():
        old = stored.get(key)
        held = None if old is None else from_ioc(old)
        merged = new if held is None else merge_ioc(held, new)
        record = bounded(counted(merged, held, added.get(key, {})))
        if record != held:  # nothing new: re-running a feed writes nothing
            writes.append(Write(key, held, record))
    return writes


def _op(write: Write, stored: dict[str, Doc], token: str) -> Op:
    if write.held is None:
        return InsertOne(ioc_doc(write.record, token))
    return ReplaceOne({"_id": write.key, "_v": stored[write.key].get("_v")}, ioc_doc(write.record, token))


async def _write(coll: Collection, ops: list[Op], keys: list[str]) -> tuple[set[str], int]:
    """Run ``ops`` unordered; (keys whose insert met a duplicate ``_id``, matched replace count)."""
    try:
        result = await coll.bulk_write(ops, ordered=False)
    except BulkWriteError as exc:
        errors = exc.details.get("writeErrors", [])
        if any(e.get("code") != _DUPLICATE_KEY for e in errors):
            raise
        return {keys[e["index"]] for e in errors}, int(exc.details.get("nMatched", 0))
    return set(), result.matched_count


async def _round(coll: Collection, pending: dict[str, Ioc], added: Added, deltas: Counter[CounterKey]
                 ) -> dict[str, Ioc]:
    """Merge and write ``pending``, tallying the counters of the writes that won; returns the records that
    lost a race and need another round."""
    lost, _ = await _swap(coll, list(pending), lambda stored: plan(pending, stored, added), deltas)
    return {key: pending[key] for key in lost}


async def _swap(coll: Collection, keys: list[str], planner: Callable[[dict[str, Doc]], list[Write]],
                deltas: Counter[CounterKey]) -> tuple[set[str], list[Write]]:
    """One compare-and-swap round: read ``keys``, write what ``planner`` makes of them, tally the writes
    that won; (keys that lost a race, the writes that won)."""
    stored = {d["_id"]: d async for d in coll.find({"_id": {"$in": keys}})}
    token = uuid.uuid4().hex
    writes = planner(stored)
    if not writes:
        return set(), []
    written = [w.key for w in writes]
    lost, matched = await _write(coll, [_op(w, stored, token) for w in writes], written)
    replaced = [w.key for w in writes if w.held is not None]
    if matched < len(replaced):
        # A replace that won and was replaced again since also shows a moved ``_v``: its merge runs again
        # (merges commute), and its counter move is left to the writer that replaced it.
        moved = coll.find({"_id": {"$in": replaced}, "_v": {"$ne": token}}, {"_id": 1})
        lost |= {d["_id"] async for d in moved}
    won = [w for w in writes if w.key not in lost]
    for w in won:
        tally(deltas, w.held, w.record)
    return lost, won


Change = Callable[[str, Ioc], Ioc]  # (key, stored record) -> the record to store (the same one: no write)


def _changes(change: Change, stored: dict[str, Doc]) -> list[Write]:
    writes = []
    for key, doc in stored.items():
        held = from_ioc(doc)
        record = change(key, held)
        if record != held:
            writes.append(Write(key, held, record))
    return writes


async def change_records(coll: Collection, counters: Collection, keys: Iterable[str], change: Change
                         ) -> list[tuple[Ioc, Ioc]]:
    """Store ``change`` of each stored record among ``keys`` by compare-and-swap rounds, as ``upsert`` writes
    (a record that moved meanwhile is changed again from its new state), and move the counters; (stored,
    changed) of each record written."""
    pending = list(dict.fromkeys(keys))
    deltas: Counter[CounterKey] = Counter()
    changed: list[tuple[Ioc, Ioc]] = []
    try:
        for _ in range(MAX_ROUNDS):
            if not pending:
                return changed
            lost, won = await _swap(coll, pending, partial(_changes, change), deltas)
            changed += [(w.held, w.record) for w in won if w.held is not None]
            pending = [key for key in pending if key in lost]
        raise StoreError(f"{len(pending)} IOC records kept changing under concurrent writers; retry")
    finally:
        await ioc_counters.apply(counters, deltas)


async def upsert(coll: Collection, links: Collection, counters: Collection, incoming: Iterable[Ioc]) -> None:
    """Insert or merge every record of ``incoming`` (see the module docstring), then move the counters."""
    pending = fold(incoming)
    added = await write_links(links, pending)
    deltas: Counter[CounterKey] = Counter()
    try:
        for _ in range(MAX_ROUNDS):
            if not pending:
                return
            pending = await _round(coll, pending, added, deltas)
        raise StoreError(f"{len(pending)} IOC records kept changing under concurrent writers; retry")
    finally:
        await ioc_counters.apply(counters, deltas)


async def revoke(
    coll: Collection, counters: Collection, key: str, reason: str, at: datetime
) -> tuple[Ioc | None, bool]:
    """Revoke the record under ``key`` (a concurrent merge keeps the revocation: ``codec.merge_ioc``); (the
    record as stored now or None, whether this call changed it)."""
    changed = await change_records(coll, counters, [key], lambda _, held: revoked(held, reason, at))
    if changed:
        return changed[0][1], True
    doc = await coll.find_one({"_id": key})
    return (None if doc is None else from_ioc(doc)), False


async def backfill_stix_ids(coll: Collection) -> int:
    """Give documents written before ``stix_id`` and ``grams`` existed their STIX object id and value
    trigrams (run by ``open``).

    ``$set`` of values derived from ``_id`` alone, leaving ``_v`` as it is: a concurrent merge that
    replaces the document writes the same values, so no compare-and-swap is needed.
    """
    done, ops = 0, []
    missing = {"$or": [{"stix_id": {"$exists": False}}, {"grams": {"$exists": False}}]}
    async for doc in coll.find(missing, {"type": 1, "value": 1}):
        derived = {"stix_id": object_id(doc["type"], doc["value"]), "grams": trigrams(doc["value"])}
        ops.append(UpdateOne({"_id": doc["_id"]}, {"$set": derived}))
        if len(ops) == BACKFILL_BATCH:
            done, ops = done + (await coll.bulk_write(ops, ordered=False)).modified_count, []
    if ops:
        done += (await coll.bulk_write(ops, ordered=False)).modified_count
    return done


async def backfill_lifecycle(coll: Collection) -> int:
    """Give documents written before the lifecycle their ``valid_until`` (run by ``open``); derived from the
    document alone, so a concurrent merge writes the same value (as ``backfill_stix_ids``)."""
    done, ops = 0, []
    async for doc in coll.find({"valid_until": {"$exists": False}}):
        ops.append(UpdateOne({"_id": doc["_id"]}, {"$set": {"valid_until": from_ioc(doc).valid_until}}))
        if len(ops) == BACKFILL_BATCH:
            done, ops = done + (await coll.bulk_write(ops, ordered=False)).modified_count, []
    if ops:
        done += (await coll.bulk_write(ops, ordered=False)).modified_count
    return done


async def backfill_links(coll: Collection, links: Collection) -> int:
    """Move the lists of documents written before the link relation into it (run by ``open``): each gets
    its counts and keeps the most recent few. Counted from what the relation lacked, so a rerun after a
    stop counts no link twice (a document is marked done by its counts, written after its links)."""
    done = 0
    while batch := await coll.find({"article_count": {"$exists": False}}).limit(BACKFILL_BATCH).to_list():
        records = {d["_id"]: from_ioc(d) for d in batch}
        added = await write_links(links, records)
        ops = [ReplaceOne({"_id": key}, ioc_doc(bounded(counted(ioc, None, added.get(key, {}))), str(d.get("_v"))))
               for (key, ioc), d in zip(records.items(), batch, strict=True)]
        done += (await coll.bulk_write(ops, ordered=False)).matched_count
    return done


def _bound(since: datetime, until: datetime | None) -> Doc:
    """The default view's records modified in ``[since, until)``: the counters leave warninglisted ones out."""
    return {"modified": {"$gte": since, **({"$lt": until} if until is not None else {})}, **LISTED_OUT}


async def _grouped(coll: Collection, bound: Doc, key: str) -> dict[str, int]:
    pipeline: list[Doc] = [{"$match": bound}, {"$group": {"_id": f"${key}", "n": {"$sum": 1}}}, {"$sort": {"_id": 1}}]
    return {d["_id"]: int(d["n"]) async for d in await coll.aggregate(pipeline)}


async def _top_sources(coll: Collection, bound: Doc, top: int | None) -> list[tuple[str, int]]:
    pipeline: list[Doc] = [{"$match": bound}, {"$unwind": "$sources"},
                           {"$group": {"_id": "$sources", "n": {"$sum": 1}}},
                           {"$sort": {"n": -1, "_id": 1}}, *([{"$limit": top}] if top is not None else [])]
    return [(d["_id"], int(d["n"])) async for d in await coll.aggregate(pipeline)]


async def _hourly(coll: Collection, bound: Doc) -> list[tuple[str, int]]:
    # The UTC hour of modified, as SQLite's substr(modified, 1, 13) of the ISO text.
    hour = {"$dateToString": {"format": "%Y-%m-%dT%H", "date": "$modified"}}
    pipeline: list[Doc] = [{"$match": bound}, {"$group": {"_id": hour, "n": {"$sum": 1}}}, {"$sort": {"_id": 1}}]
    return [(d["_id"], int(d["n"])) async for d in await coll.aggregate(pipeline)]


async def scan(coll: Collection, since: datetime, until: datetime | None, top: int | None) -> IocStats:
    """Stats counted from the records modified in ``[since, until)`` (no upper bound when None): the
    partial first day of a window (``store.ioc_counters``), and the reference the counters are tested against."""
    bound = _bound(since, until)
    return IocStats(
        total=await coll.count_documents(bound),
        by_type=await _grouped(coll, bound, "type"),
        by_confidence=await _grouped(coll, bound, "confidence"),
        by_category=await _grouped(coll, bound, "source_category"),
        top_sources=await _top_sources(coll, bound, top),
        hourly=await _hourly(coll, bound),
    )
