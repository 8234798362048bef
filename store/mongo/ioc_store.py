"""IOC records on MongoDB: one document per (type, value) in ``iocs`` (the writes are ``store.mongo.iocs``)."""

from __future__ import annotations

import dataclasses
import heapq
import itertools
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import datetime

from store.base import IocStats, ioc_position, keyset_pages
from store.ioc_counters import ESTIMATE_CAP, countable, first_whole_hour, signed, window_edge
from store.mongo import ioc_counters
from store.mongo import iocs as ioc_ops
from store.mongo.documents import from_ioc, ioc_key
from store.mongo.errors import guarded, translated
from store.mongo.ioc_links import recent
from store.mongo.part import MongoPart
from store.mongo.queries import added_arms, added_sort, and_, ioc_clauses, ioc_filter, ioc_hint, ioc_sort
from store.ports import IocStore
from store.query import IocQuery
from store.records import RECENT_LINKS, Ioc, utcnow

# Keys of one ``$in`` read: a bounded query document, whatever the caller asks for at once.
KEYS_PER_QUERY = 1_000
_LISTS_VERSION = "warninglists_version"  # meta document: the lists the records were last checked against


class MongoIocs(MongoPart, IocStore):
    """IOC records in the ``iocs`` collection (the STIX context objects are ``MongoContext``'s)."""

    @guarded
    async def upsert_iocs(self, iocs: Iterable[Ioc]) -> int:
        incoming = list(iocs)
        if not incoming:
            return 0
        try:
            await ioc_ops.upsert(self._c("iocs"), self._c("ioc_links"), self._c("ioc_counters"), incoming)
        finally:
            await self._bump()
        return len(incoming)

    @guarded
    async def replace_iocs(self, iocs: Iterable[Ioc]) -> int:
        try:
            return await ioc_ops.replace_all(self._c("iocs"), self._c("ioc_links"), self._c("ioc_counters"), iocs)
        finally:
            await self._bump()

    @guarded
    async def revoke_ioc(self, ioc_type: str, value: str, reason: str, at: datetime) -> Ioc | None:
        record, changed = await ioc_ops.revoke(self._c("iocs"), self._c("ioc_counters"), ioc_key(ioc_type, value),
                                               reason, at)
        if changed:
            await self._bump()
        return record

    async def _ioc_page(self, q: IocQuery, size: int) -> list[Ioc]:
        if q.added_order:
            return await self._added_page(q, size)
        cursor = self._c("iocs").find(ioc_filter(q)).sort(ioc_sort(q)).skip(q.offset).limit(size)
        hint = ioc_hint(q, utcnow())
        if hint is not None:
            cursor = cursor.hint(hint)
        with translated():
            return [from_ioc(d) for d in await cursor.to_list()]

    async def _added_page(self, q: IocQuery, size: int) -> list[Ioc]:
        """A page in date_added order: each arm read off its index in order, as far as the page reaches,
        and the two merged (what SQLite's UNION ALL does, store.sqlite.queries.added_select)."""
        reach, common = q.offset + size, ioc_clauses(q)
        walks = []
        for field, arm in added_arms(q):
            order = added_sort(q, field)
            cursor = self._c("iocs").find(and_([*common, arm])).sort(order).limit(reach)
            if not (q.values or q.stix_ids or q.value_contains):  # else their own indexes find the few rows
                cursor = cursor.hint(order)
            with translated():
                walks.append([(d[field], d["type"], d["value"], d) for d in await cursor.to_list()])
        merged = heapq.merge(*walks, key=lambda row: row[:3])
        return [from_ioc(row[3]) for row in itertools.islice(merged, q.offset, reach)]

    def iter_iocs(self, query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[Ioc]]:
        return keyset_pages(query, batch_size, self._ioc_page, ioc_position(query))

    @guarded
    async def count_iocs(self, query: IocQuery) -> int:
        return await self._c("iocs").count_documents(ioc_filter(dataclasses.replace(query, after=None)))

    @guarded
    async def estimate_iocs(self, query: IocQuery, cap: int = ESTIMATE_CAP) -> tuple[int, bool]:
        q = dataclasses.replace(query, after=None, offset=0)
        if not countable(q):
            n = await self._c("iocs").count_documents(ioc_filter(q), limit=cap)
            return n, n < cap
        days = await ioc_counters.count_days(self._c("ioc_counters"), q)
        if q.since is None:
            return days, True
        head = and_([ioc_filter(q), {"modified": {"$lt": first_whole_hour(q.since)}}])  # the partial first hour
        return await self._c("iocs").count_documents(head) + days, True

    @guarded
    async def get_ioc(self, ioc_type: str, value: str) -> Ioc | None:
        doc = await self._c("iocs").find_one({"_id": ioc_key(ioc_type, value)})
        return None if doc is None else from_ioc(doc)

    @guarded
    async def get_iocs(self, ioc_type: str, values: Sequence[str]) -> dict[str, Ioc]:
        keys = [ioc_key(ioc_type, value) for value in dict.fromkeys(values)]
        found = {}
        for start in range(0, len(keys), KEYS_PER_QUERY):
            async for doc in self._c("iocs").find({"_id": {"$in": keys[start:start + KEYS_PER_QUERY]}}):
                found[doc["value"]] = from_ioc(doc)
        return found

    @guarded
    async def ioc_links(self, ioc_type: str, value: str, kind: str, limit: int = RECENT_LINKS) -> list[str]:
        return await recent(self._c("ioc_links"), ioc_key(ioc_type, value), kind, limit)

    @guarded
    async def warninglists_version(self) -> str | None:
        doc = await self._c("meta").find_one({"_id": _LISTS_VERSION})
        return None if doc is None else str(doc["value"])

    @guarded
    async def set_warninglists_version(self, version: str) -> None:
        await self._c("meta").update_one({"_id": _LISTS_VERSION}, {"$set": {"value": version}}, upsert=True)

    @guarded
    async def ioc_stats(self, since: datetime, top: int = 10) -> IocStats:
        edge = window_edge(since)
        head = signed(await ioc_ops.scan(self._c("iocs"), edge.low, edge.high, None), edge.sign)
        counted = await ioc_counters.stats(self._c("ioc_counters"), head, edge, top)
        # The warninglisted records of the window, by their partial index (they are few).
        left_out = await self._c("iocs").count_documents({"warninglisted": True, "modified": {"$gte": since}})
        return dataclasses.replace(counted, warninglisted=left_out)
