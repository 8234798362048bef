"""The IOC link relation on MongoDB (``ioc_links``): one document per (record, kind, ref) with when it was
last reported, so a record keeps counts and the most recent few (``store.codec.bounded``).

A link is upserted with ``$max`` on ``seen``: the server creates each link document exactly once, so the
writer whose upsert created it, and only that writer, counts it (``upserted_ids``). Counting is therefore
exact under concurrent writers without a transaction (see ``store.mongo.iocs``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pymongo import UpdateOne
from pymongo.asynchronous.collection import AsyncCollection

from store.codec import ioc_links
from store.records import Ioc

Collection = AsyncCollection[dict[str, Any]]
BATCH = 1_000
# Added links per record key: kind -> how many the relation did not hold before.
Added = dict[str, dict[str, int]]


def link_id(key: str, kind: str, ref: str) -> str:
    """``_id`` of a link: refs (article ids, CVE and technique ids) never contain ``|``, so the last two
    fields split off unambiguously whatever the record key holds."""
    return f"{key}|{kind}|{ref}"


async def write_links(coll: Collection, records: Mapping[str, Ioc]) -> Added:
    """Upsert every link ``records`` (record key -> record) lists; how many of each were new."""
    ops: list[UpdateOne] = []
    owners: list[tuple[str, str]] = []
    for key, ioc in records.items():
        for kind, ref, seen in ioc_links(ioc):
            ops.append(
                UpdateOne(
                    {"_id": link_id(key, kind, ref)},
                    {"$max": {"seen": seen}, "$setOnInsert": {"ioc": key, "kind": kind, "ref": ref}},
                    upsert=True,
                )
            )
            owners.append((key, kind))
    added: Added = {}
    for start in range(0, len(ops), BATCH):
        result = await coll.bulk_write(ops[start : start + BATCH], ordered=False)
        for index in result.upserted_ids or {}:
            key, kind = owners[start + index]
            added.setdefault(key, {})[kind] = added.get(key, {}).get(kind, 0) + 1
    return added


async def recent(coll: Collection, key: str, kind: str, limit: int) -> list[str]:
    """The ``limit`` most recently reported links of one kind, newest first (index on ioc, kind, seen, ref)."""
    cursor = coll.find({"ioc": key, "kind": kind}, {"ref": 1}).sort([("seen", -1), ("ref", -1)]).limit(limit)
    return [d["ref"] for d in await cursor.to_list()]
