"""What each concern of the Mongo backend reads and writes through: the shared ``MongoStore``."""

from __future__ import annotations

from store.mongo.backend import Collection, MongoStore


class MongoPart:
    """One concern's view of the shared database: its collections and the data version."""

    def __init__(self, conn: MongoStore) -> None:
        self._conn = conn

    def _c(self, name: str) -> Collection:
        return self._conn._c(name)

    async def _bump(self) -> None:
        await self._conn._bump()

    async def data_version(self) -> int:
        return await self._conn.data_version()
