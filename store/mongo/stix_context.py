"""STIX context objects on MongoDB: the ``stix_context`` collection (store.stix_context), ``_id`` the STIX id.

Each write reads the held versions of its facts, then replaces only the new and changed ones. Two
processes writing at once may stamp out of commit order (no transaction spans them), so a reader
could pass a version a slower writer stores a moment later; a single writer (the worker pool's
collection task) keeps the order exact, as the SQLite backend always does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pymongo import ReplaceOne

from store.mongo.errors import guarded, translated
from store.mongo.part import MongoPart
from store.mongo.queries import and_, keyset
from store.ports.context import ContextStore
from store.stix_context import ContextFact, ContextObject, ContextQuery, changes, stamp

_TIMES = ("created", "modified", "date_added")


def _object(doc: dict[str, Any]) -> ContextObject:
    return ContextObject(doc["_id"], doc["type"], doc["facts"], *(doc[t] for t in _TIMES))


def _doc(obj: ContextObject) -> dict[str, Any]:
    return {
        "_id": obj.id,
        "type": obj.type,
        "facts": obj.facts,
        "created": obj.created,
        "modified": obj.modified,
        "date_added": obj.date_added,
    }


def context_filter(q: ContextQuery) -> dict[str, Any]:
    """``q`` as a filter: the keyset on (date_added, _id) and the filters (store.sqlite.stix_context)."""
    clauses: list[dict[str, Any]] = [
        {name: {"$in": list(values)}}
        for name, values in (("type", q.types), ("_id", q.ids), ("modified", q.versions))
        if values
    ]
    if q.added_after is not None:
        clauses.append({"date_added": {"$gt": q.added_after}})
    if q.after is not None:
        clauses.append(keyset([("date_added", q.after[0]), ("_id", q.after[1])], False))
    return and_(clauses)


class MongoContext(MongoPart, ContextStore):
    """The STIX context objects in their own collection."""

    @guarded
    async def put_context(self, facts: Iterable[ContextFact]) -> int:
        incoming = list(facts)
        if not incoming:
            return 0
        coll = self._c("stix_context")
        held = {d["_id"]: _object(d) async for d in coll.find({"_id": {"$in": list({f.id for f in incoming})}})}
        latest = await coll.find_one({}, sort=[("date_added", -1)], projection={"date_added": 1})
        written = changes(incoming, held, stamp(latest["date_added"] if latest else None))
        if written:
            await coll.bulk_write([ReplaceOne({"_id": o.id}, _doc(o), upsert=True) for o in written], ordered=False)
            await self._bump()
        return len(written)

    @guarded
    async def context_page(self, query: ContextQuery) -> list[ContextObject]:
        cursor = self._c("stix_context").find(context_filter(query)).sort([("date_added", 1), ("_id", 1)])
        with translated():
            return [_object(d) for d in await cursor.limit(query.limit).to_list()]
