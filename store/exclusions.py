"""What one account's exports and TAXII pages leave out, whatever the filters.

Today: the values the account reported as false positives (POST /api/v1/sightings), left out at once.
An account's allowlist joins here: :func:`account_exclusion` is the one place that gathers what an account
excludes, and :class:`Exclusion` is what the exports (``exporters.precompute``) and TAXII pages
(``taxii.page_query``) apply and key their cached entries by.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import orjson

from store.ports import Stores
from store.ports.sightings import IocKey
from store.records import Ioc


@dataclass(frozen=True, slots=True)
class Exclusion:
    """Values (type, normalised value) one account's bulk reads leave out."""

    values: frozenset[IocKey] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.values)

    def leaves_out(self, ioc: Ioc) -> bool:
        return (ioc.type, ioc.value) in self.values

    def kept(self, iocs: Iterable[Ioc], limit: int) -> list[Ioc]:
        """The first ``limit`` records of ``iocs`` not left out."""
        return [ioc for ioc in iocs if not self.leaves_out(ioc)][:limit]

    def widened(self, limit: int) -> int:
        """Records to read so that ``limit`` remain: each excluded value drops at most one record."""
        return limit + len(self.values)

    def key(self) -> str:
        """A digest naming the exclusion in cache keys; "" when it excludes nothing, so an account without
        one shares every other account's cached entries."""
        if not self.values:
            return ""
        return hashlib.sha256(orjson.dumps(sorted(self.values))).hexdigest()[:16]


async def account_exclusion(stores: Stores, user_id: str) -> Exclusion:
    """Everything the account ``user_id`` excludes from its exports and TAXII pages."""
    return Exclusion(await stores.sightings.false_positives_of(user_id))
