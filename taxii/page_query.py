"""One page of a collection, read from the store by keyset (TAXII 2.1 sections 3.4 and 5.3-5.6).

Records come in the store's TAXII order, (date_added, type, value) (``IocQuery.added_order``), so objects
are in ascending date_added order as TAXII requires (section 5.3). A record's date_added is that of its
current version (``Ioc.date_added``): its last change, revocation or expiry (section 5.4, one manifest entry
per version). A page boundary is a position rather than an offset: records added or changed while a client
walks the collection land after every position already handed out, so each version is returned once, and
a poller passing the last date_added as ``added_after`` receives every later version. Statuses, and so
expiries, are read at the request's millisecond (store.decay.instant), the precision writes are stored at: a
page holds every version added up to then, so none comes to be later with a date_added before its last.

``added_after``, the tier lookback, ``match[type]`` and ``match[id]`` are pushed down to the store, which
indexes each record's STIX object id (``store.stixids``), so the object and versions endpoints (sections
5.5, 5.7) read only the records they name. A ``match[version]`` timestamp can only be decided on a built
object, so a page that filters on one scans at most ``SCAN_BUDGET`` records; it may come back short, or
even empty, with ``more`` and a ``next`` that continues after the last record scanned ("the server may
return fewer", section 3.4.2). Every request is bounded that way, whatever the filters.

The context collection holds fixed objects (identity and marking definition, added when created) and
the stored context objects around the records (store.stix_context: reports, intrusion sets, malware,
relationships, each version added when the store wrote it). Both are read in (date_added, id) order and
merged: the store reads one past the page from the position by index, with ``match[type]``,
``match[id]`` and ``match[version]`` pushed down, so a page costs the same at any data size, and the
positions, filters and tokens are the IOC collections' (TAXII 2.1 sections 3.4 and 5.3).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from exporters.base import ExportContext, load_context
from exporters.stix import stix_object
from exporters.stix_context import context_object
from store.decay import instant
from store.exclusions import AccountExclusions
from store.ports import ArticleStore, ContextStore, IocStore
from store.query import IocFilters, IocQuery
from store.records import Ioc, utcnow
from store.stix_context import ContextObject, ContextQuery
from taxii.filters import Matcher
from taxii.media import parse_timestamp
from taxii.next_tokens import Placed, Position

SCAN_BUDGET = 20_000
# The object endpoint must find its object or answer 404 with certainty; its reads stay bounded all the
# same, since the store returns only the records carrying that id.
UNBOUNDED = 10**12
_NARROW_BATCH = 1_000

Contexts = Callable[[Sequence[Ioc]], Awaitable[ExportContext]]
Item = tuple[Placed, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class PageSpec:
    """What to read: store-side filters, where to start, how many, and the object-side matcher."""

    types: tuple[str, ...] | None  # None: every type; (): nothing can match
    lower: datetime
    after: Position | None
    limit: int
    matcher: Matcher
    unique_ids: int = 0
    budget: int = SCAN_BUDGET
    records: IocFilters = IocFilters()  # a saved feed's record filters (its types are in ``types``)
    fixed: tuple[dict[str, Any], ...] = ()  # a collection of fixed objects: read instead of the records
    stored: bool = False  # and of the stored context objects (the context collection)
    # A poll (``added_after``) or a version match (``match[version]``): every status, revoked and expired
    # versions included, instead of the active records alone (store.query.DEFAULT_STATUSES).
    poll: bool = False
    now: datetime | None = None
    floor: datetime | None = None  # the tier lookback, which an expiry's record keeps to (IocQuery.floor)
    # The caller's account's exclusions (its allowlist): records left out after the store query.
    exclusions: AccountExclusions | None = field(default=None, compare=False, hash=False)

    @property
    def ids(self) -> tuple[str, ...]:
        """The STIX ids the store filters on (``match[id]``, the object endpoints); () for any id."""
        return tuple(sorted(self.matcher.ids)) if self.matcher.ids else ()

    @property
    def narrows(self) -> bool:
        """Whether some records read may not make the page: object filters, or the account's exclusions."""
        return self.matcher.narrows or (self.exclusions is not None and not self.exclusions.empty)

    def kept(self, ioc: Ioc, obj: dict[str, Any]) -> bool:
        return self.matcher(obj) and not (self.exclusions is not None and self.exclusions.excludes(ioc))

    @property
    def clock(self) -> datetime:
        """The time statuses and date_added are read at: ``now``, or this millisecond (store.decay.instant)."""
        return self.now if self.now is not None else instant(utcnow())

    def scan_limit(self) -> int:
        """Rows to read: one past the page when every row matches, else the scan budget."""
        return max(self.limit + 1, self.budget) if self.narrows else self.limit + 1


@dataclass(frozen=True, slots=True)
class Page:
    """The objects of one page; ``resume_at`` is set exactly when ``more`` is true."""

    items: list[Item]
    more: bool
    resume_at: Position | None = None


def context_maker(store: ArticleStore, now: datetime, floor: datetime, tier: str) -> Contexts:
    """Export contexts for batches of records: the reporting articles become external references."""

    async def make(batch: Sequence[Ioc]) -> ExportContext:
        return await load_context(store, batch, generated_at=now, since=floor, until=now, tier=tier)

    return make


@dataclass(frozen=True, slots=True)
class Place:
    """An object's place in its collection's order: its date_added, then the IOC type and value (a record),
    or the id (a context object)."""

    date_added: datetime
    value: str
    type: str = ""

    @classmethod
    def of(cls, obj: dict[str, Any]) -> Place:
        """A fixed object: added when it was created (it never changes)."""
        return cls(parse_timestamp(obj["created"]), obj["id"])

    @classmethod
    def held(cls, held: ContextObject) -> Place:
        """A stored context object's place: its current version's date_added, then its id."""
        return cls(held.date_added, held.id)

    @classmethod
    def record(cls, ioc: Ioc, now: datetime) -> Place:
        """A record's place: the date_added of its current version at ``now`` (``Ioc.date_added``)."""
        return cls(ioc.date_added(now), ioc.value, ioc.type)

    def key(self) -> tuple[datetime, str, str]:
        return (self.date_added, self.type, self.value)


async def context_page(store: ContextStore, spec: PageSpec) -> Page:
    """A page of ``spec.fixed`` and, for the context collection, the stored context objects, merged in
    (date_added, id) order after ``spec.lower`` and ``spec.after``: each source gives at most one past
    the page, so one past the merged page tells whether there is more."""
    after = spec.after.key() if spec.after else None
    placed = [(Place.of(obj), obj) for obj in spec.fixed]
    if spec.stored:
        placed += [(Place.held(held), context_object(held)) for held in await store.context_page(_stored(spec))]
    placed.sort(key=lambda item: item[0].key())
    matching: list[Item] = [(place, obj) for place, obj in placed if place.date_added > spec.lower
                            and (after is None or place.key() > after) and spec.matcher(obj)]
    more = len(matching) > spec.limit
    return Page(matching[: spec.limit], more, Position.of(matching[spec.limit - 1][0]) if more else None)


def _stored(spec: PageSpec) -> ContextQuery:
    """The store's part of a context page: every filter but the fixed objects' pushed down to the index."""
    matcher = spec.matcher
    return ContextQuery(added_after=spec.lower, after=(spec.after.date_added, spec.after.value) if spec.after else None,
                        types=tuple(sorted(matcher.types or ())), ids=spec.ids,
                        versions=tuple(sorted(parse_timestamp(t) for t in matcher.times or ())), limit=spec.limit + 1)


async def read_page(store: IocStore, context: ContextStore, spec: PageSpec, contexts: Contexts) -> Page:
    """Scan from ``spec.after`` and keep matching objects until the page is full or the scan ends."""
    if spec.fixed:
        return await context_page(context, spec)
    if spec.types == ():
        return Page([], False)
    scan = spec.scan_limit()
    query = replace(spec.records, types=spec.types or ()).query(
        poll=spec.poll, now=spec.clock, floor=spec.floor, stix_ids=spec.ids, added_after=spec.lower,
        after=spec.after.key() if spec.after else None, added_order=True, limit=scan)
    rows = store.iter_iocs(query, min(scan, _NARROW_BATCH if spec.narrows else scan))
    try:
        return await _fill(rows, spec, contexts, scan)
    finally:
        close = getattr(rows, "aclose", None)  # an early return leaves the store's generator open
        if close is not None:
            await close()


# Far enough that every record has expired by then (the longest half-life's validity is a few years).
_FAR = timedelta(days=100 * 365)


async def next_expiry(store: IocStore, now: datetime) -> datetime | None:
    """The earliest valid_until after ``now`` of a record not revoked (None: none): when a status, and so a
    date_added, changes next without a write. Read at a clock when all have expired, the expired records
    dated after ``now`` in date_added order are those to expire, the first the next: one step of the
    valid_until walk (store.sqlite.queries.added_arms)."""
    query = IocQuery(statuses=("expired",), include_warninglisted=True, added_order=True, now=now + _FAR,
                     added_after=now, limit=1)
    async for batch in store.iter_iocs(query, 1):
        return batch[0].valid_until if batch else None
    return None


async def _objects(batch: list[Ioc], contexts: Contexts) -> list[dict[str, Any]]:
    """The object of each record, its reporting articles fetched once for the whole batch."""
    ctx = await contexts(batch)
    return [stix_object(ioc, ctx) for ioc in batch]


async def _fill(rows: AsyncIterator[list[Ioc]], spec: PageSpec, contexts: Contexts, scan: int) -> Page:
    items: list[Item] = []
    last: Ioc | None = None
    scanned, now = 0, spec.clock
    async for batch in rows:
        for ioc, obj in zip(batch, await _objects(batch, contexts), strict=True):
            if spec.kept(ioc, obj):
                if len(items) == spec.limit:  # one match past the page: there is more
                    return Page(items, True, Position.of(items[-1][0]))
                items.append((Place.record(ioc, now), obj))
                if len(items) == spec.unique_ids:  # every asked id found; ids are unique
                    return Page(items, False)
            last, scanned = ioc, scanned + 1
    if scanned >= scan and last is not None:  # budget spent: continue after the last record decided on
        return Page(items, True, Position.of(Place.record(last, now)))
    return Page(items, False)
