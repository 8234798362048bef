"""STIX context objects on SQLite: the ``stix_context`` table (store.stix_context)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

import orjson

from store.ports.context import ContextStore
from store.records import iso, parse_stored
from store.sqlite.backend import BUMP_VERSION
from store.sqlite.part import SqlitePart, _rows_in
from store.stix_context import ContextFact, ContextObject, ContextQuery, changes, encode_facts, stamp

_COLUMNS = "id, type, facts, created, modified, date_added"
_PUT = f"INSERT OR REPLACE INTO stix_context ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"


def _object(row: Any) -> ContextObject:
    return ContextObject(row[0], row[1], orjson.loads(row[2]), *(parse_stored(t) for t in row[3:6]))


def _in(column: str, values: tuple[Any, ...]) -> tuple[str, list[Any]]:
    return f"{column} IN ({', '.join('?' * len(values))})", list(values)


def context_where(q: ContextQuery) -> tuple[str, list[Any]]:
    """``q``'s clause: the keyset bound and the filters, every one an index's column or a cheap check."""
    clauses, params = ["1"], list[Any]()
    if q.added_after is not None:
        clauses.append("date_added > ?")
        params.append(iso(q.added_after))
    if q.after is not None:
        clauses.append("(date_added, id) > (?, ?)")
        params += [iso(q.after[0]), q.after[1]]
    for column, values in (("type", q.types), ("id", q.ids), ("modified", tuple(map(iso, q.versions)))):
        if values:
            clause, more = _in(column, values)
            clauses.append(clause)
            params += more
    return " AND ".join(clauses), params


class SqliteContext(SqlitePart, ContextStore):
    """The STIX context objects in the ``stix_context`` table."""

    async def put_context(self, facts: Iterable[ContextFact]) -> int:
        incoming = list(facts)
        if not incoming:
            return 0

        def put(db: sqlite3.Connection) -> int:  # in the write transaction: stamps grow with the commits
            held = {
                row[0]: _object(row)
                for row in _rows_in(
                    f"SELECT {_COLUMNS} FROM stix_context WHERE id IN ({{marks}})", [f.id for f in incoming], ()
                )(db)
            }
            latest = db.execute("SELECT max(date_added) FROM stix_context").fetchone()[0]
            written = changes(incoming, held, stamp(parse_stored(latest) if latest else None))
            db.executemany(
                _PUT,
                [
                    (o.id, o.type, encode_facts(o.facts), iso(o.created), iso(o.modified), iso(o.date_added))
                    for o in written
                ],
            )
            if written:  # a re-run that changes nothing keeps every cached page
                db.execute(BUMP_VERSION)
            return len(written)

        return await self._run(lambda db: self._write(db, put))

    async def context_page(self, query: ContextQuery) -> list[ContextObject]:
        where, params = context_where(query)
        sql = f"SELECT {_COLUMNS} FROM stix_context WHERE {where} ORDER BY date_added, id LIMIT ?"
        return [_object(row) for row in await self._all(sql, [*params, query.limit])]
