"""Objects, object, versions and manifest endpoints (TAXII 2.1 sections 5.3 to 5.7), read-only.

Every request, first page or follow-up, is planned afresh: the tier lookback is applied to
``added_after`` and to the token's position alike, the page size is capped at the server maximum, and
the filters come from the request or from the signed token (:mod:`taxii.next_tokens`). Pages carry
``X-TAXII-Date-Added-First`` and ``-Last`` (section 3.3.1); an empty page carries neither (it
has no first or last object), so a client keeps the ``added_after`` it sent for its next poll.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from server.errors import NotFoundError
from server.ioc_params import lifecycle_filters
from server.params import single_value
from server.windows import Window, clamp_since, window_headers
from store.cache import NearMap, near_map
from store.decay import instant
from store.exclusions import AccountExclusions, account_exclusions
from store.query import IocFilters
from store.records import iso, lookback_floor, utcnow
from taxii.collections import TaxiiCollection
from taxii.filters import (
    DEFAULT_PAGE,
    MAX_PAGE,
    OBJECT_FIELDS,
    OBJECTS_FIELDS,
    VERSIONS_FIELDS,
    Filters,
    Matcher,
    parse_filters,
    parse_limit,
    store_types,
    version_of,
)
from taxii.handlers import TaxiiHandler
from taxii.media import STIX_21, taxii_time
from taxii.next_tokens import Position, make_token, resume, scope
from taxii.page_cache import CachedPage, PageCache, page_key
from taxii.page_query import SCAN_BUDGET, UNBOUNDED, Page, PageSpec, context_maker, next_expiry, read_page


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    """A planned page: the spec to read, the filters a token will carry, its scope and window headers."""

    spec: PageSpec
    filters: Filters
    scope: str
    headers: dict[str, str]


Render = Callable[[Plan, Page], bytes]
# TAXII clients poll the same URIs over and over. Within one second of the lookback floor, at
# one data version and tier, a URI always plans to the same page (the plan reads only the URI, the tier
# and the floor; the token's signature was checked when the entry was made, and tokens do not expire),
# so this process remembers the page's cache key and the window headers instead of planning again.
_ANSWERS = 256
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class PageHandler(TaxiiHandler):
    """Shared planning, reading and writing of paged endpoints."""

    endpoint = "objects"
    fields = OBJECTS_FIELDS
    saved: IocFilters | None = None  # the collection's saved-feed filters, set by ``collection``
    exclusions: AccountExclusions | None = None  # what the caller's account leaves out, set by ``answer``

    def position(self, token_scope: str, asked: Filters) -> tuple[Filters, Position | None]:
        """The request's filters and, on a follow-up page, the token's filters and position."""
        token = single_value(self.request.query_arguments, "next")
        if token is None:
            return asked, None
        return resume(self.ctx.settings.secret_key, token, token_scope, asked)

    def plan(self, collection: TaxiiCollection, token_scope: str, now: datetime, object_id: str = "") -> Plan:
        """Filters, position, page size and the lookback-clamped lower bound of this request at ``now``."""
        args = self.request.query_arguments
        tier = self.principal.tier
        filters, after = self.position(token_scope, parse_filters(args, self.fields))
        limit = parse_limit(args, DEFAULT_PAGE, min(MAX_PAGE, tier.ioc_results_max))
        effective = dataclasses.replace(filters, ids=(object_id,)) if object_id else filters
        window = clamp_since(filters.added_after, tier.ioc_lookback_days, now)
        if collection.fixed:  # not IOC records: the lookback does not apply (taxii.collections, CONTEXT)
            window = Window(filters.added_after or _EPOCH, window.floor, False, window.lookback_days)
        nothing = effective.serves_nothing()
        types = () if nothing else store_types(collection.ioc_types, effective)
        records = dataclasses.replace(self.records(collection), include_warninglisted=self.listed())
        spec = PageSpec(
            types,
            window.since,
            after,
            limit,
            Matcher(effective),
            unique_ids=len(effective.ids),
            budget=UNBOUNDED if object_id else SCAN_BUDGET,
            records=records,
            fixed=() if nothing else collection.fixed,
            stored=collection.stored,
            exclusions=self.exclusions,
            poll=filters.added_after is not None or bool(filters.versions),
            now=instant(now),
            floor=window.floor,
        )
        return Plan(spec, filters, token_scope, window_headers(window, False))

    async def answer(self, plan_at: Callable[[datetime], Plan], render: Render) -> None:
        """The page of ``plan_at(now)``, from the cache when it is still exact, else read, rendered and
        cached; a repeated URI skips the planning while its page is held in this process."""
        now, tier = utcnow(), self.principal.tier
        pages = PageCache(self.ctx.cache, self.ctx.settings.cache_ttl_seconds)
        version = await self.ctx.iocs.data_version()
        self.exclusions = await account_exclusions(self.ctx.stores, self.principal.user.id)
        repeat = (
            version,
            tier.name,
            lookback_floor(tier.ioc_lookback_days, now),
            self.request.uri,
            self.saved_key(),
            self.excluded_key(),
        )
        answers: NearMap[tuple[str, dict[str, str]]] = near_map(self.ctx.cache, "taxii-answers", _ANSWERS)
        known = answers.get(repeat)
        cached = pages.near.get(known[0]) if known else None
        if cached is not None and not cached.current(instant(now)):
            cached = None  # a record expired since: the page changed without a write
        if known is None or cached is None:
            plan = plan_at(now)
            known = (page_key(version, self.cache_parts(plan)), plan.headers)
            cached = await self.cached_or_read(pages, known[0], plan, render)
            answers.put(repeat, known)
        else:
            self._headers["X-Cache"] = "hit"
        self._headers.update(known[1])  # digits and fixed words: no need for set_header's checks (base.py)
        self.known_etag = cached.etag
        self.date_headers(cached)
        self.write_taxii(cached.body)

    async def cached_or_read(self, pages: PageCache, key: str, plan: Plan, render: Render) -> CachedPage:
        """The page under ``key`` when it is exact for the plan's lower bound, else read and cached."""
        cached = await pages.get(key, plan.spec.lower, plan.spec.clock)
        self.set_header("X-Cache", "hit" if cached else "miss")
        if cached is None:
            page = await self.read(plan)
            body = render(plan, page)  # may refuse (404) before anything is cached
            first, last = (page.items[0][0].date_added, page.items[-1][0].date_added) if page.items else (None, None)
            # Records' statuses and date_added change at their valid_until: the page holds until the next one.
            until = None if plan.spec.fixed else await next_expiry(self.ctx.iocs, plan.spec.clock)
            cached = CachedPage.build(body, first, last, until)
            await pages.put(key, cached)
        return cached

    def cache_parts(self, plan: Plan) -> dict[str, Any]:
        after = plan.spec.after
        return {
            "s": plan.scope,
            "f": plan.filters.signature(),
            "n": plan.spec.limit,
            "d": self.principal.tier.ioc_lookback_days,
            "q": self.saved_key(),
            "x": self.excluded_key(),
            "w": self.listed(),
            "r": plan.spec.records.normalised(),
            "p": [iso(after.date_added), after.ioc_type, after.value] if after else None,
        }

    async def collection(self, collection_id: str) -> TaxiiCollection:
        found = await super().collection(collection_id)
        self.saved = found.filters
        return found

    def saved_key(self) -> tuple[tuple[str, ...], ...] | None:
        """A saved feed's filters, in the page's keys: an edited feed is another page at the same URI."""
        return None if self.saved is None else tuple(map(tuple, self.saved.normalised()))

    def records(self, collection: TaxiiCollection) -> IocFilters:
        """The record filters: a saved feed's own, else the request's ``status`` and ``min_score`` (checked on
        every collection, a 400 naming the parameter when malformed), as on the IOC list and exports. Not TAXII
        filters: like ``include_warninglisted``, the ``next`` token does not carry them."""
        asked = IocFilters(**lifecycle_filters(self.params))
        return collection.filters or asked

    def listed(self) -> bool:
        """``include_warninglisted``: records whose value is on a warninglist, left out by default as in every
        IOC list and export (not a TAXII filter, so the ``next`` token does not carry it)."""
        return bool(self.params.flag("include_warninglisted", False))

    def excluded_key(self) -> str | None:
        """The account's exclusions, in the page's keys: accounts with other allowlists or false positives get
        other pages."""
        return None if self.exclusions is None or self.exclusions.empty else self.exclusions.digest

    async def read(self, plan: Plan) -> Page:
        tier = self.principal.tier.name
        # The objects' lifecycle is read at the plan's clock, as their date_added is: a version and its date agree.
        contexts = context_maker(self.ctx.articles, plan.spec.clock, plan.spec.lower, tier)
        return await read_page(self.ctx.iocs, self.ctx.stores.context, plan.spec, contexts)

    def date_headers(self, page: CachedPage) -> None:
        """Section 3.3.1, formatted when the page was built; none on an empty page (no object, no date)."""
        if page.first:  # timestamps this server formatted (taxii_time): safe header values
            self._headers["X-TAXII-Date-Added-First"] = page.first
            self._headers["X-TAXII-Date-Added-Last"] = page.last

    def envelope(self, plan: Plan, page: Page, key: str, items: list[Any]) -> bytes:
        """``{"more", "next"?, key?}``: ``next`` exactly when ``more``; no empty list (section 3.7)."""
        body: dict[str, Any] = {"more": page.more}
        if page.more and page.resume_at is not None:
            body["next"] = make_token(self.ctx.settings.secret_key, plan.scope, plan.filters, page.resume_at)
        if items:
            body[key] = items
        return orjson.dumps(body)


class ObjectsHandler(PageHandler):
    """Section 5.3: the collection's objects, filtered and paged."""

    async def get(self, collection_id: str) -> None:
        collection = await self.collection(collection_id)
        token_scope = scope(self.endpoint, collection.id)
        await self.answer(
            lambda now: self.plan(collection, token_scope, now),
            lambda plan, page: self.envelope(plan, page, "objects", [obj for _, obj in page.items]),
        )


class ManifestHandler(PageHandler):
    """Section 5.4: id, date_added, version and media type of each object the same filters select."""

    endpoint = "manifest"

    async def get(self, collection_id: str) -> None:
        collection = await self.collection(collection_id)
        token_scope = scope(self.endpoint, collection.id)
        await self.answer(
            lambda now: self.plan(collection, token_scope, now),
            lambda plan, page: self.envelope(
                plan,
                page,
                "objects",
                [
                    {
                        "id": obj["id"],
                        "date_added": taxii_time(place.date_added),
                        "version": version_of(obj),
                        "media_type": STIX_21,
                    }
                    for place, obj in page.items
                ],
            ),
        )


class ObjectHandler(PageHandler):
    """Section 5.5: one object (each record has one version); 404 when the collection does not hold it."""

    endpoint = "object"
    fields = OBJECT_FIELDS
    key = "objects"

    def item(self, obj: dict[str, Any]) -> Any:
        return obj

    async def get(self, collection_id: str, object_id: str) -> None:
        collection = await self.collection(collection_id)
        token_scope = scope(self.endpoint, collection.id, object_id)

        def render(plan: Plan, page: Page) -> bytes:
            if not page.items and not page.more:
                raise NotFoundError(
                    f"no object {object_id!r} in collection {collection.id!r} matches",
                    details={"collection_id": collection.id, "object_id": object_id},
                )
            return self.envelope(plan, page, self.key, [self.item(obj) for _, obj in page.items])

        await self.answer(lambda now: self.plan(collection, token_scope, now, object_id), render)


class VersionsHandler(ObjectHandler):
    """Section 5.7: the versions of one object; a record keeps only its current version."""

    endpoint = "versions"
    fields = VERSIONS_FIELDS
    key = "versions"

    def item(self, obj: dict[str, Any]) -> Any:
        return version_of(obj)
