"""Saved feeds: their name and filters read and checked, their resource and links, and the writes.

A feed's filters are the IOC list's (``store.query.IOC_FILTER_FIELDS``): each value goes through the very
parser of ``GET /api/v1/iocs`` (``server.ioc_params.ioc_filters``), so a value refused there is refused
here with the same message, named ``filters.<parameter>``. The API's JSON bodies and the account web's
forms both end in :func:`parse_filters`, :func:`create_feed` and :func:`update_feed`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from config.tiers import TIERS, Tier
from exporters.registry import EXPORTERS
from server.errors import BadRequest, ConflictError, bad_param, plan_quota
from server.ioc_params import ioc_filters
from server.params import Params
from store.base import Conflict, QuotaExceeded
from store.ports import FeedStore
from store.query import IOC_FILTER_FIELDS, IocFilters
from store.records import Feed, User, iso, utcnow

NAME_MAX = 100
VALUES_MAX = 100  # values per filter: a feed is a filter, not a watch list
FEEDS_PATH = "/api/v1/feeds"
# The TAXII API root's collections (taxii.routes serves them; the server may not import taxii): a saved feed
# is the collection whose id is the feed's.
TAXII_COLLECTIONS_PATH = "/api/taxii2/api/collections/"
# What a TAXII client sends in Accept (TAXII 2.1 section 1.6.8; taxii.media.TAXII_21), for the curl lines shown.
TAXII_ACCEPT = "application/taxii+json;version=2.1"


def parse_name(value: Any) -> str:
    """A feed's name: text of 1 to ``NAME_MAX`` characters, kept as typed but for surrounding spaces."""
    if not isinstance(value, str) or not value.strip():
        raise bad_param("name", "must be a non-empty string")
    name = value.strip()
    if len(name) > NAME_MAX or not name.isprintable():
        raise bad_param("name", f"must be at most {NAME_MAX} printable characters")
    return name


def parse_filters(value: Any) -> IocFilters:
    """``{parameter: [values] | "a,b"}`` checked by the IOC list's own parser, each a 400 naming it."""
    if not isinstance(value, Mapping):
        raise bad_param("filters", f"must be an object of the IOC filters ({', '.join(IOC_FILTER_FIELDS)})")
    unknown = [name for name in value if name not in IOC_FILTER_FIELDS]
    if unknown:
        raise bad_param(f"filters.{unknown[0]}", f"is not a filter; known: {', '.join(IOC_FILTER_FIELDS)}")
    args = {name: [joined(name, given).encode()] for name, given in value.items() if given not in ("", [], None)}
    try:
        return ioc_filters(Params(args))
    except BadRequest as exc:
        name = (exc.details or {}).get("parameter", "")
        raise bad_param(f"filters.{name}", exc.message.partition(": ")[2] or exc.message) from exc


def joined(name: str, given: Any) -> str:
    """One comma-separated value, as the query string's form of a list."""
    values = given.split(",") if isinstance(given, str) else given
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise bad_param(f"filters.{name}", "must be a list of strings or one comma-separated string")
    if len(values) > VALUES_MAX:
        raise bad_param(f"filters.{name}", f"holds more than {VALUES_MAX} values")
    if any("," in v for v in values) and not isinstance(given, str):
        raise bad_param(f"filters.{name}", "values may not contain a comma")
    return ",".join(values)


def feed_links(feed_id: str, tier: Tier, base: str) -> dict[str, Any]:
    """Where a feed is read: its JSON (every tier), and on a plan with them its TAXII collection and one
    export per registered format (spec, Limits: Free has neither)."""
    own = f"{base}{FEEDS_PATH}/{feed_id}"
    links: dict[str, Any] = {"self": own, "iocs": own + "/iocs"}
    if tier.taxii:
        links["taxii"] = f"{base}{TAXII_COLLECTIONS_PATH}{feed_id}/"
    if tier.ioc_exports:
        links["exports"] = {fmt: f"{own}/export/{fmt}" for fmt in EXPORTERS}
    return links


def feed_resource(feed: Feed, tier: Tier, base: str) -> dict[str, Any]:
    """The API's form of a feed."""
    return {
        "id": feed.id,
        "name": feed.name,
        "filters": feed.filters,
        "created_at": iso(feed.created_at),
        "modified_at": iso(feed.modified_at),
        "links": feed_links(feed.id, tier, base),
    }


async def create_feed(store: FeedStore, user: User, name: str, filters: IocFilters, upgrade_url: str) -> Feed:
    """A new feed of ``user``: 403 quota_exceeded past the tier's ``max_feeds``, 409 for a name in use."""
    now, tier = utcnow(), TIERS[user.tier]
    feed = Feed(str(uuid.uuid4()), user.id, name, filters.as_params(), now, now)
    try:
        return await store.create_feed(feed, tier.max_feeds)
    except QuotaExceeded as exc:
        raise plan_quota(f"the {tier.name.capitalize()} plan allows at most {tier.max_feeds} saved feeds",
                         tier.max_feeds, tier.name, upgrade_url) from exc
    except Conflict as exc:
        raise _name_taken(name) from exc


async def update_feed(store: FeedStore, feed: Feed, name: str | None, filters: IocFilters | None) -> Feed:
    """``feed`` with a new name and/or filters (the filters replaced as a whole); 409 for a name in use."""
    changed = Feed(
        feed.id,
        feed.user_id,
        feed.name if name is None else name,
        feed.filters if filters is None else filters.as_params(),
        feed.created_at,
        utcnow(),
    )
    try:
        return await store.update_feed(changed)
    except Conflict as exc:
        raise _name_taken(changed.name) from exc


def _name_taken(name: str) -> ConflictError:
    return ConflictError(f"you already have a feed named {name!r}", details={"parameter": "name"})


def valid_id(feed_id: str) -> bool:
    """Feed ids are UUIDs; anything else names no feed (and is never sent to the store)."""
    try:
        return str(uuid.UUID(feed_id)) == feed_id.lower()
    except ValueError:
        return False
