"""IOCs: one record per (type, value), merged across the articles that present it."""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import datetime

import orjson

from store.base import IocStats
from store.ioc_counters import ESTIMATE_CAP
from store.ports.lifecycle import Versioned
from store.query import IocQuery, status_clock
from store.records import RECENT_LINKS, Ioc


class IocStore(Versioned):
    """Async storage of IOC records (the IOC pages, TAXII, exports, statistics)."""

    @abc.abstractmethod
    async def upsert_iocs(self, iocs: Iterable[Ioc]) -> int:
        """Insert or merge by (type, value); first_seen never moves later. Bumps the data version."""

    @abc.abstractmethod
    async def replace_iocs(self, iocs: Iterable[Ioc]) -> int:
        """Make these the only records (a re-enrichment recomputes every record from the articles, so a
        value no article presents any more disappears). Bumps the data version."""

    @abc.abstractmethod
    async def revoke_ioc(self, ioc_type: str, value: str, reason: str, at: datetime) -> Ioc | None:
        """Revoke one record (``store.codec.revoked``: its ``modified`` becomes ``at``) and bump the data
        version; the record as stored now, or None when there is none. Revoking a revoked record changes
        nothing. ``store.events.revoke`` also tells the live feed (an ``ioc-revoked`` event)."""

    @abc.abstractmethod
    def iter_iocs(self, query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[Ioc]]:
        """Records matching ``query`` ordered by (first_seen, type, value), or by (date_added, type, value) for
        ``query.added_order`` (``Ioc.date_added`` at the query's clock), ``query.limit`` at most."""

    async def iter_ioc_rows(self, query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[bytes]]:
        """Like ``iter_iocs``, as API forms encoded as JSON: the list and search pages stream the bytes
        without decoding records. Backends that keep the encoding stored override this."""
        now = status_clock(query)
        async for batch in self.iter_iocs(query, batch_size):
            yield [orjson.dumps(i.to_api(now)) for i in batch]

    @abc.abstractmethod
    async def count_iocs(self, query: IocQuery) -> int:
        """How many records match ``query`` (offset and limit ignored)."""

    @abc.abstractmethod
    async def estimate_iocs(self, query: IocQuery, cap: int = ESTIMATE_CAP) -> tuple[int, bool]:
        """(count, exact) of ``query`` at a cost that does not grow with the data (offset, limit and keyset
        ignored). Filters on type, confidence, category and ``since`` alone are counted exactly from the
        counters (``store.ioc_counters``); others count at most ``cap`` matches, a lower bound (``exact``
        False) when the count reaches it."""

    @abc.abstractmethod
    async def get_ioc(self, ioc_type: str, value: str) -> Ioc | None:
        """One record, or None."""

    async def get_iocs(self, ioc_type: str, values: Sequence[str]) -> dict[str, Ioc]:
        """The records of ``ioc_type`` among ``values``, by value (values with no record left out).
        Backends read them in a query per chunk of values, not one per value (the bulk lookup)."""
        found = {}
        for value in dict.fromkeys(values):
            ioc = await self.get_ioc(ioc_type, value)
            if ioc is not None:
                found[value] = ioc
        return found

    @abc.abstractmethod
    async def ioc_links(self, ioc_type: str, value: str, kind: str, limit: int = RECENT_LINKS) -> list[str]:
        """The ``limit`` most recently reported links of one kind of a record (``article``, ``cve`` or
        ``technique``; see ``store.records.LINK_FIELDS``), newest first. A record lists only the few most
        recent; this reads further, by index, without loading the rest."""

    @abc.abstractmethod
    async def ioc_stats(self, since: datetime, top: int = 10) -> IocStats:
        """Totals of records modified since ``since``, with an hourly series of those records."""

    @abc.abstractmethod
    async def warninglists_version(self) -> str | None:
        """The version of the warninglists (``store.warninglists``) the stored records were last checked
        against (``ctiwire iocs recheck``); None before any check."""

    @abc.abstractmethod
    async def set_warninglists_version(self, version: str) -> None:
        """Remember that every stored record was checked against the warninglists of ``version``."""

    async def all_iocs(self, query: IocQuery) -> list[Ioc]:
        """Every record of ``query`` in one list."""
        rows: list[Ioc] = []
        async for batch in self.iter_iocs(query):
            rows.extend(batch)
        return rows
