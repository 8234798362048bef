"""Sources: the configured feeds and their collection health."""

from __future__ import annotations

import abc

from store.records import Source


class SourceStore(abc.ABC):
    """Async storage of sources by name."""

    @abc.abstractmethod
    async def upsert_source(self, source: Source) -> None:
        """Insert or replace a source and its health by name."""

    @abc.abstractmethod
    async def list_sources(self) -> list[Source]:
        """Every configured source, by name."""
