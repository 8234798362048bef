"""What every backend shares across concerns: its connection's life, and the version of its content."""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any


class Lifecycle(abc.ABC):
    """The connection every concern of one backend shares: opened once, closed once, probed by /healthz."""

    name: str = "abstract"

    @abc.abstractmethod
    async def open(self) -> None:
        """Connect and create tables or indexes (idempotent)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release connections."""

    @abc.abstractmethod
    async def ping(self) -> dict[str, Any]:
        """Health facts for /healthz; raises StoreUnavailable when the database does not answer."""

    @asynccontextmanager
    async def bulk(self) -> AsyncIterator[None]:
        """A long run of writes (a demo seed, a bulk import) inside: a backend may hold more of its data in
        memory for it, and gives that memory back after. Nothing by default."""
        yield


class Versioned(abc.ABC):
    """The data version: caches of pages and exports built from articles or IOCs key on it."""

    @abc.abstractmethod
    async def data_version(self) -> int:
        """A counter that every write of articles or IOCs increases."""
