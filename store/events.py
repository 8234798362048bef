"""Writing to the live feed's log: the events of stored articles and IOC records.

``publish_changes`` is called where collection writes (ingest.pipeline, ingest.reprocess), after the
store has committed: an event always describes a stored record, in the form the API serves it (the
article list form; the IOC record as GET /api/v1/iocs shows it, after the store merged it).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime

import orjson

from store.base import StoreError
from store.ports import Stores
from store.ports.events import NewEvent
from store.records import Article, Ioc, ms

log = logging.getLogger("ctiwire.events")


async def change_events(stores: Stores, articles: Iterable[Article], records: Iterable[Ioc]) -> list[NewEvent]:
    """An ``article`` event per article, then an ``ioc`` event per record as stored now."""
    events = [NewEvent("article", orjson.dumps(a.list_form())) for a in articles]
    for key in dict.fromkeys((r.type, r.value) for r in records):
        stored = await stores.iocs.get_ioc(*key)
        if stored is not None:
            events.append(NewEvent("ioc", orjson.dumps(stored.to_api())))
    return events


async def publish_changes(stores: Stores, articles: Sequence[Article], records: Sequence[Ioc]) -> int:
    """Append the events of what was just stored; returns how many. The write has happened either way,
    so a log that cannot be reached is logged (the polling API still has the change), never raised."""
    try:
        events = await change_events(stores, articles, records)
        await stores.events.append(events)
    except StoreError as exc:
        log.error(
            "could not append %d articles and %d IOC records to the event log: %s", len(articles), len(records), exc
        )
        return 0
    return len(events)


async def revoke(stores: Stores, ioc_type: str, value: str, reason: str, at: datetime) -> Ioc | None:
    """Revoke a record (``IocStore.revoke_ioc``) and, when that changed it, append an ``ioc-revoked`` event
    with the record as GET /api/v1/iocs shows it now: what the CLI and the false-positive consensus call.
    Like ``publish_changes``, a log that cannot be reached is logged; the revocation stands either way."""
    record = await stores.iocs.revoke_ioc(ioc_type, value, reason, at)
    if record is None or record.revoked_at != ms(at):
        return record
    try:
        await stores.events.append([NewEvent("ioc-revoked", orjson.dumps(record.to_api()))])
    except StoreError as exc:
        log.error("could not append the revocation of %s %s to the event log: %s", ioc_type, value, exc)
    return record
