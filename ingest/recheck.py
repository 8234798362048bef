"""Stored IOC records checked again against the warninglists (``ctiwire iocs recheck``).

Ingestion checks each record as it is written (``ingest.aggregate``); the stored ones are checked again when
the lists change, which is when ``pymispwarninglists`` is upgraded: the stores remember the lists' version
their records were checked against, and the worker runs this at start when it differs. A record whose
lists changed is written again with a newer ``modified``, so pollers (``/iocs?since=``, TAXII
``added_after`` manifests) see it leave or re-enter the default lists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from store import events
from store.ports import IocStore, Stores
from store.query import IocQuery
from store.records import Ioc, utcnow
from store.warninglists import Warninglists, warninglists

BATCH = 1_000
Progress = Callable[[int, int], None]  # (records checked, records in all)
# Called with each batch's newly listed records once they are written: what else a listing sets off (the
# indicator lifecycle revokes such an indicator).
OnListed = Callable[[list[Ioc]], Awaitable[object]]


def revoking(stores: Stores) -> OnListed:
    """What a listing sets off: each newly listed record is revoked for everyone, so a SIEM that loaded it
    sees it withdrawn (TAXII ``revoked: true``, the stream's ``ioc-revoked``, date pollers), not merely
    absent from the next default list."""

    async def revoke_all(records: list[Ioc]) -> None:
        at = utcnow()
        for ioc in records:
            await events.revoke(stores, ioc.type, ioc.value, "on warninglist " + ", ".join(ioc.warninglists), at)

    return revoke_all


@dataclass
class RecheckReport:
    """What one recheck did: records checked, newly listed, no longer listed, and the lists' version."""

    version: str
    checked: int = 0
    listed: list[Ioc] = field(default_factory=list)
    unlisted: list[Ioc] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return len(self.listed) + len(self.unlisted)


def rechecked(ioc: Ioc, lists: Warninglists, now: datetime) -> Ioc | None:
    """``ioc`` with the lists its value is on now and a newer ``modified``, or None when they did not change."""
    names = lists.names(ioc.type, ioc.value)
    if names == ioc.warninglists:
        return None
    return dataclasses.replace(ioc, warninglists=names, modified=max(now, ioc.modified))


async def recheck(
    store: IocStore,
    progress: Progress | None = None,
    lists: Warninglists | None = None,
    on_listed: OnListed | None = None,
) -> RecheckReport:
    """Check every stored record, write the changed ones, then remember the lists' version."""
    lists = lists or warninglists()
    total = await store.count_iocs(IocQuery(include_warninglisted=True))
    report, now = RecheckReport(lists.version), utcnow()
    # The walk's order (first_seen, type, value) does not move when a record is rewritten, so writing the
    # changed records of each batch while walking neither skips nor repeats one.
    async for batch in store.iter_iocs(IocQuery(include_warninglisted=True, limit=max(total, 1)), BATCH):
        changed = [new for ioc in batch if (new := rechecked(ioc, lists, now)) is not None]
        if changed:
            await store.upsert_iocs(changed)
        listed = [new for new in changed if new.warninglisted]
        report.listed += listed
        report.unlisted += [new for new in changed if not new.warninglisted]
        if listed and on_listed is not None:
            await on_listed(listed)
        report.checked += len(batch)
        if progress is not None:
            progress(report.checked, total)
    await store.set_warninglists_version(lists.version)
    return report


async def recheck_if_upgraded(
    store: IocStore, lists: Warninglists | None = None, on_listed: OnListed | None = None
) -> RecheckReport | None:
    """Recheck when the stored records were checked against other lists than this process holds (an upgrade
    of ``pymispwarninglists``, or a database from before the lists); None when they are current."""
    lists = lists or warninglists()
    if await store.warninglists_version() == lists.version:
        return None
    return await recheck(store, lists=lists, on_listed=on_listed)
