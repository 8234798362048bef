"""Sightings on the SQLite backend: one row per report, the record as JSON beside the columns counted."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import orjson

from store.codec import from_doc, to_doc
from store.ports.sightings import IocKey, SightingStore, Tally
from store.records import Sighting, iso
from store.sqlite.part import SqlitePart, _json, _rows_in

_TALLY = (
    "SELECT value, kind, count(DISTINCT user_id) FROM sightings WHERE type = ? AND value IN ({marks}) "
    "GROUP BY value, kind"
)


def _tallies(rows: Sequence[Any], ioc_type: str, found: dict[IocKey, Tally]) -> None:
    """Fold (value, kind, accounts) rows of ``ioc_type`` into ``found``."""
    for value, kind, accounts in rows:
        held = found.get((ioc_type, value), Tally())
        found[ioc_type, value] = held._replace(**{"seen" if kind == "seen" else "false_positives": int(accounts)})


def _tallies_of(db: sqlite3.Connection, keys: Sequence[IocKey]) -> dict[IocKey, Tally]:
    by_type: dict[str, list[str]] = defaultdict(list)
    for ioc_type, value in dict.fromkeys(keys):
        by_type[ioc_type].append(value)
    found: dict[IocKey, Tally] = {}
    for ioc_type, values in by_type.items():
        _tallies(_rows_in(_TALLY, values, (ioc_type,))(db), ioc_type, found)
    return found


_FALSE_POSITIVES = (
    "SELECT json_group_array(json_array(type, value)) FROM (SELECT DISTINCT type, value "
    "FROM sightings WHERE user_id = ? AND kind = 'false_positive')"
)


def _pairs(row: Any) -> frozenset[IocKey]:
    return frozenset((t, v) for t, v in orjson.loads(row[0]))


class SqliteSightings(SqlitePart, SightingStore):
    """Reports in the ``sightings`` table."""

    async def add_sightings(self, sightings: Sequence[Sighting]) -> dict[IocKey, Tally]:
        rows = [(s.id, s.user_id, s.type, s.value, s.kind, iso(s.created_at), _json(to_doc(s))) for s in sightings]

        def add(db: sqlite3.Connection) -> dict[IocKey, Tally]:
            db.executemany(
                "INSERT INTO sightings (id, user_id, type, value, kind, created_at, doc) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            return _tallies_of(db, [(s.type, s.value) for s in sightings])  # in the same transaction

        return await self._run(lambda db: self._write(db, add)) if rows else {}

    async def list_sightings(self, ioc_type: str, value: str) -> list[Sighting]:
        rows = await self._all(
            "SELECT doc FROM sightings WHERE type = ? AND value = ? ORDER BY created_at, id", (ioc_type, value)
        )
        return [from_doc(Sighting, orjson.loads(r[0])) for r in rows]

    async def tallies(self, keys: Sequence[IocKey] | None = None) -> dict[IocKey, Tally]:
        if keys is not None:
            return await self._run(lambda db: _tallies_of(db, keys))
        rows = await self._all(
            "SELECT type, value, kind, count(DISTINCT user_id) FROM sightings GROUP BY type, value, kind"
        )
        found: dict[IocKey, Tally] = {}
        for ioc_type, value, kind, accounts in rows:
            _tallies([(value, kind, accounts)], ioc_type, found)
        return found

    async def false_positives_of(self, user_id: str) -> frozenset[IocKey]:
        # Read on every export and TAXII page: inline and remembered until the file's next commit
        # (SqliteStore._remembered), one row of JSON.
        return self._remembered(_FALSE_POSITIVES, (user_id,), _pairs)
