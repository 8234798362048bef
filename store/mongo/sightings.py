"""Sightings on MongoDB: one document per report in ``sightings``; tallies by aggregation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pymongo import InsertOne

from store.codec import from_doc, to_doc
from store.mongo.errors import guarded
from store.mongo.part import MongoPart
from store.ports.sightings import IocKey, SightingStore, Tally
from store.records import Sighting

KEYS_PER_QUERY = 1_000


def _doc(sighting: Sighting) -> dict[str, Any]:
    doc = to_doc(sighting)
    doc["_id"] = doc.pop("id")
    return doc


def _of_keys(keys: Sequence[IocKey]) -> dict[str, Any]:
    return {"$or": [{"type": t, "value": v} for t, v in keys]}


class MongoSightings(MongoPart, SightingStore):
    """Reports in the ``sightings`` collection."""

    @guarded
    async def add_sightings(self, sightings: Sequence[Sighting]) -> dict[IocKey, Tally]:
        if not sightings:
            return {}
        await self._c("sightings").bulk_write([InsertOne(_doc(s)) for s in sightings], ordered=False)
        return await self.tallies([(s.type, s.value) for s in sightings])

    @guarded
    async def list_sightings(self, ioc_type: str, value: str) -> list[Sighting]:
        found = self._c("sightings").find({"type": ioc_type, "value": value}).sort([("created_at", 1), ("_id", 1)])
        return [from_doc(Sighting, {**d, "id": d["_id"]}) async for d in found]

    @guarded
    async def tallies(self, keys: Sequence[IocKey] | None = None) -> dict[IocKey, Tally]:
        if keys is None:
            return await self._tally({})
        wanted = list(dict.fromkeys(keys))
        found: dict[IocKey, Tally] = {}
        for start in range(0, len(wanted), KEYS_PER_QUERY):
            found.update(await self._tally(_of_keys(wanted[start : start + KEYS_PER_QUERY])))
        return found

    async def _tally(self, match: dict[str, Any]) -> dict[IocKey, Tally]:
        """Distinct accounts per (type, value, kind): one group per account first, then counted."""
        pipeline: list[dict[str, Any]] = [
            {"$match": match},
            {"$group": {"_id": {"t": "$type", "v": "$value", "k": "$kind", "u": "$user_id"}}},
            {"$group": {"_id": {"t": "$_id.t", "v": "$_id.v", "k": "$_id.k"}, "n": {"$sum": 1}}},
        ]
        found: dict[IocKey, Tally] = {}
        async for row in await self._c("sightings").aggregate(pipeline):
            key, kind = (row["_id"]["t"], row["_id"]["v"]), row["_id"]["k"]
            field = "seen" if kind == "seen" else "false_positives"
            found[key] = found.get(key, Tally())._replace(**{field: int(row["n"])})
        return found

    @guarded
    async def false_positives_of(self, user_id: str) -> frozenset[IocKey]:
        found = self._c("sightings").find({"user_id": user_id, "kind": "false_positive"}, {"type": 1, "value": 1})
        return frozenset([(d["type"], d["value"]) async for d in found])
