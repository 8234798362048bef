"""TAXII 2.1 handlers on the server's plumbing: same keys, tiers, scopes and rate limits; Pro only.

What differs from the JSON API (TAXII 2.1 sections 1.6.8 and 3.6):
- every response, errors included, is ``application/taxii+json;version=2.1``;
- errors are the TAXII error resource (``title``, ``description``, ``error_id``, ``error_code``,
  ``http_status`` as a string, ``details`` with the request id), never the API envelope;
- a request whose ``Accept`` excludes the TAXII 2.1 media type is answered 406 (taxii.media: wildcards,
  ``application/json`` and no Accept are answered in TAXII JSON);
- a 401 carries ``WWW-Authenticate`` challenges for Bearer and Basic: SIEM TAXII connectors send the key
  as a Basic password (server.credentials).
"""

from __future__ import annotations

from http.client import responses
from typing import Any

import orjson

from config.tiers import SCOPE_TAXII, Tier
from server.base import BaseHandler
from server.errors import ApiError, NotFoundError
from server.feed_params import valid_id
from taxii.collections import BY_ID, COLLECTIONS, TaxiiCollection, feed_collection
from taxii.filters import DEFAULT_PAGE, MAX_PAGE
from taxii.media import TAXII_21, accepts_taxii21

API_ROOT_PATH = "/api/taxii2/api/"


class NotAcceptable(ApiError):
    """406: the ``Accept`` header excludes the TAXII 2.1 media type (TAXII 2.1 section 3.6)."""

    status = 406
    code = "not_acceptable"


class TaxiiHandler(BaseHandler):
    """Base of every TAXII handler: the TAXII media type and error resource, then the Accept check."""

    scope = SCOPE_TAXII
    basic_auth = True
    realm = "ctiwire TAXII"

    def plan_allows(self, tier: Tier) -> bool:
        return tier.taxii

    def set_default_headers(self) -> None:
        # send_error() clears the headers and calls this again, so errors keep the TAXII media type.
        super().set_default_headers()
        self._headers["Content-Type"] = TAXII_21  # a constant: set_header's check is for values from outside

    async def prepare(self) -> None:
        await super().prepare()
        if not accepts_taxii21(self.request.headers.get("Accept")):
            raise NotAcceptable(f"the Accept header excludes {TAXII_21}, the only media type this server answers in",
                                details={"accept": self.request.headers.get("Accept", "")})

    def render_error(self, status: int, code: str, message: str, details: dict[str, Any] | None) -> None:
        """The TAXII 2.1 error resource (section 3.6.1) in place of the API envelope."""
        self.set_header("Content-Type", TAXII_21)
        body = {"title": responses.get(status, "Error"), "description": message, "error_id": self.request_id,
                "error_code": code, "http_status": str(status),
                "details": {**(details or {}), "request_id": self.request_id}}
        self.set_status(status)
        self.finish(orjson.dumps(body))

    def write_taxii(self, payload: Any) -> None:
        # Content-Type is already TAXII_21: set_default_headers sets it, and nothing here changes it.
        self.finish(payload if isinstance(payload, bytes) else orjson.dumps(payload))

    async def collection(self, collection_id: str) -> TaxiiCollection:
        """A fixed collection, or one of the caller's account's saved feeds (any other id: 404, another
        account's feed included)."""
        found = BY_ID.get(collection_id)
        if found is None and valid_id(collection_id):
            feed = await self.ctx.stores.feeds.get_feed(self.principal.user.id, collection_id.lower())
            found = None if feed is None else feed_collection(feed)
        if found is None:
            raise NotFoundError(f"no collection {collection_id!r} in this API root",
                                details={"collection_id": collection_id})
        return found


class TaxiiNotFoundHandler(TaxiiHandler):
    """Unknown paths under the TAXII prefixes: a TAXII 404, with or without a key."""

    public = True

    async def prepare(self) -> None:
        raise NotFoundError(f"no TAXII resource at {self.request.path}")


class DiscoveryHandler(TaxiiHandler):
    """Server discovery (section 4.1); served at /api/taxii2/ and at /taxii2/ where TAXII expects it."""

    async def get(self) -> None:
        self.write_taxii({
            "title": "ctiwire TAXII 2.1 server",
            "description": "Read-only STIX 2.1 indicators and vulnerabilities aggregated from security reporting.",
            "default": API_ROOT_PATH,
            "api_roots": [API_ROOT_PATH],
        })


class ApiRootHandler(TaxiiHandler):
    """The one API root (section 4.2). Read-only, so no request body is ever accepted."""

    async def get(self) -> None:
        self.write_taxii({
            "title": "ctiwire",
            "description": "IOC collections; objects in ascending date_added order, paged with next: "
                           f"{DEFAULT_PAGE:,} objects a page unless limit asks otherwise, {MAX_PAGE:,} at most.",
            "versions": [TAXII_21],
            "max_content_length": 0,
        })


class StatusHandler(TaxiiHandler):
    """Section 4.3: status resources follow writes, and this server takes none, so every id is unknown."""

    async def get(self, status_id: str) -> None:
        raise NotFoundError(f"no status {status_id!r}: this server is read-only and keeps no status resources",
                            details={"status_id": status_id})


class CollectionsHandler(TaxiiHandler):
    """Section 5.1: every collection, always in the same order: the fixed ones, then the caller's account's
    saved feeds, oldest first."""

    async def get(self) -> None:
        feeds = await self.ctx.stores.feeds.list_feeds(self.principal.user.id)
        every = [*COLLECTIONS, *(feed_collection(feed) for feed in feeds)]
        self.write_taxii({"collections": [c.resource() for c in every]})


class CollectionHandler(TaxiiHandler):
    """Section 5.2: one collection, or 404."""

    async def get(self, collection_id: str) -> None:
        self.write_taxii((await self.collection(collection_id)).resource())
