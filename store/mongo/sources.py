"""Sources on MongoDB: one document per name in ``sources``."""

from __future__ import annotations

from store.mongo.documents import from_source, source_doc
from store.mongo.errors import guarded
from store.mongo.part import MongoPart
from store.ports import SourceStore
from store.records import Source


class MongoSources(MongoPart, SourceStore):
    """Sources in the ``sources`` collection."""

    @guarded
    async def upsert_source(self, source: Source) -> None:
        await self._c("sources").replace_one({"_id": source.name}, source_doc(source), upsert=True)

    @guarded
    async def list_sources(self) -> list[Source]:
        return [from_source(d) async for d in self._c("sources").find({}).sort([("_id", 1)])]
