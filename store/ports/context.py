"""The STIX objects around the IOC records (reports, intrusion sets, malware, relationships): stored one per
object with the times the store gave its current version, so TAXII pages them soundly (store.stix_context)."""

from __future__ import annotations

import abc
from collections.abc import Iterable

from store.stix_context import ContextFact, ContextObject, ContextQuery


class ContextStore(abc.ABC):
    """Async storage of the STIX context objects, by id, paged by (date_added, id)."""

    @abc.abstractmethod
    async def put_context(self, facts: Iterable[ContextFact]) -> int:
        """Hold the STIX context objects of ``facts`` (store.stix_context): a new fact, or one whose facts
        changed, is written as a new version stamped later than every stored ``date_added``; an unchanged
        one is left alone. Returns how many were written; bumps the data version when any was."""

    @abc.abstractmethod
    async def context_page(self, query: ContextQuery) -> list[ContextObject]:
        """Stored context objects matching ``query`` in (date_added, id) order, ``query.limit`` at most,
        read by index whatever the number stored."""
