"""Sources on the SQLite backend: one row per name holding the record."""

from __future__ import annotations

import orjson

from store.codec import from_doc, to_doc
from store.ports import SourceStore
from store.records import Source
from store.sqlite.part import SqlitePart, _json


class SqliteSources(SqlitePart, SourceStore):
    """Sources in the ``sources`` table."""

    async def upsert_source(self, source: Source) -> None:
        row = (source.name, _json(to_doc(source)))
        await self._run(lambda db: self._write(db, lambda d: d.execute(
            "INSERT OR REPLACE INTO sources VALUES (?, ?)", row)))

    async def list_sources(self) -> list[Source]:
        rows = await self._all("SELECT doc FROM sources ORDER BY name")
        return [from_doc(Source, orjson.loads(r[0])) for r in rows]
