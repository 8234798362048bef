"""``/api/v1/allowlist``: the account's own known-good values, left out of its IOC exports and TAXII pages.

Scope ``feeds`` (the account's own curation of what it reads, like its saved feeds; every plan). Entries
are values of any IOC type, CIDR networks and domains (covering their subdomains), defanged forms accepted
(``store.exclusions.parse_entry``). Every route reads the caller's account's entries only: another
account's entry is a 404 like one that never existed.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from config.tiers import SCOPE_FEEDS, TIERS
from server.base import BaseHandler
from server.bodies import JsonBodyHandler
from server.context import AppContext
from server.errors import BadRequest, NotFoundError, plan_quota
from server.openapi_parts import RATE_HEADERS, bad_request, error_response, ok, operation, param, per_tier
from store.base import NotFound, QuotaExceeded
from store.exclusions import EntryError, parse_entry
from store.ports.allowlist import AllowEntry, AllowlistStore
from store.records import User, utcnow

NOTE_MAX = 200
ENTRIES_PER_REQUEST = 1_000


def _entry_at(item: Any, index: int, user: User, at: datetime) -> AllowEntry:
    """One body item (a string, or ``{"value", "note"?}``) as an entry of ``user``, else a 400 naming it."""
    where = f"entries[{index}]"
    value, note = (
        (item, "")
        if isinstance(item, str)
        else ((item.get("value"), item.get("note", "")) if isinstance(item, dict) else (None, ""))
    )
    if not isinstance(value, str):
        raise BadRequest(
            f"parameter '{where}': give a string, or an object with a string `value`", details={"parameter": where}
        )
    if not isinstance(note, str) or len(note) > NOTE_MAX:
        raise BadRequest(
            f"parameter '{where}.note': a string of at most {NOTE_MAX} characters",
            details={"parameter": f"{where}.note"},
        )
    try:
        kind, ioc_type, normalised = parse_entry(value)
    except EntryError as exc:
        raise BadRequest(f"parameter '{where}': {value[:80]!r} {exc}", details={"parameter": where}) from exc
    return AllowEntry(str(uuid.uuid4()), user.id, kind, ioc_type, normalised, at, note.strip())


def parse_entries(body: Any, user: User) -> list[AllowEntry]:
    """``{"entries": [...]}`` (or one ``{"value", "note"?}``) as entries of ``user``; a 400 for the first
    that is none."""
    items = body.get("entries", [body] if "value" in body else None) if isinstance(body, dict) else None
    if not isinstance(items, list) or not items:
        raise BadRequest(
            "parameter 'entries': a JSON object {\"entries\": [...]} with at least one entry",
            details={"parameter": "entries"},
        )
    if len(items) > ENTRIES_PER_REQUEST:
        raise BadRequest(
            f"parameter 'entries': at most {ENTRIES_PER_REQUEST:,} in one request",
            details={"parameter": "entries", "max_items": ENTRIES_PER_REQUEST},
        )
    now = utcnow()  # a millisecond apart: the list (oldest first) keeps the order they were given in
    return [_entry_at(item, i, user, now + timedelta(milliseconds=i)) for i, item in enumerate(items)]


async def add_entries(
    store: AllowlistStore, user: User, entries: list[AllowEntry], upgrade_url: str
) -> list[AllowEntry]:
    """Store ``entries`` (the web's form and the API alike): 403 quota_exceeded past the plan's allowlist."""
    tier = TIERS[user.tier]
    try:
        return await store.add_allow_entries(entries, tier.max_allowlist)
    except QuotaExceeded as exc:
        raise plan_quota(f"the {tier.name.capitalize()} plan's allowlist holds at most {tier.max_allowlist:,} entries",
                         tier.max_allowlist, tier.name, upgrade_url) from exc


class AllowlistHandler(JsonBodyHandler):
    """``GET``: the account's entries, oldest first; ``POST``: add entries, 201 with them as stored."""

    scope = SCOPE_FEEDS

    async def get(self) -> None:
        entries = await self.ctx.stores.allowlist.list_allow_entries(self.principal.user.id)
        self.write_json(
            {
                "data": [e.to_api() for e in entries],
                "meta": {"total": len(entries), "limit": self.principal.tier.max_allowlist},
            }
        )

    async def post(self) -> None:
        user = self.principal.user
        entries = parse_entries(self.json_body(), user)
        stored = await add_entries(self.ctx.stores.allowlist, user, entries, self.ctx.settings.upgrade_url)
        self.write_json({"data": [e.to_api() for e in stored]}, 201)


def _not_found(entry_id: str) -> NotFoundError:
    return NotFoundError(f"you have no allowlist entry {entry_id[:80]!r}", details={"entry_id": entry_id[:80]})


class AllowEntryHandler(BaseHandler):
    """``/api/v1/allowlist/{id}``: ``GET`` one of the account's entries; ``DELETE`` it, 204."""

    scope = SCOPE_FEEDS

    async def get(self, entry_id: str) -> None:
        entries = await self.ctx.stores.allowlist.list_allow_entries(self.principal.user.id)
        found = next((e for e in entries if e.id == entry_id), None)
        if found is None:
            raise _not_found(entry_id)
        self.write_json(found.to_api())

    async def delete(self, entry_id: str) -> None:
        try:
            await self.ctx.stores.allowlist.delete_allow_entry(self.principal.user.id, entry_id)
        except NotFound as exc:
            raise _not_found(entry_id) from exc
        self.set_status(204)


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [
        (r"/api/v1/allowlist", AllowlistHandler, {"ctx": ctx}),
        (r"/api/v1/allowlist/([^/]+)", AllowEntryHandler, {"ctx": ctx}),
    ]


_ENTRY_TEXT = {
    "type": "string",
    "minLength": 1,
    "maxLength": 2048,
    "description": (
        "An IP address, a CIDR network (at least /8 for IPv4, /32 for IPv6), a domain (its subdomains included: a "
        "URL or e-mail address on it is left out too), or one URL, hash, e-mail address or CVE; defanged forms "
        "accepted."
    ),
}
OPENAPI_SCHEMAS: dict[str, Any] = {
    "AllowEntry": {
        "type": "object",
        "required": ["id", "kind", "type", "value", "created_at"],
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "kind": {"type": "string", "enum": ["value", "cidr", "domain"]},
            "type": {"type": "string", "description": "the IOC type of the value (ipv4/ipv6 for a network)"},
            "value": {"type": "string", "description": "normalised (refanged, lowercased, canonical network)"},
            "note": {"type": "string"},
            "created_at": {"type": "string", "format": "date-time"},
        },
    },
    "AllowEntries": {
        "type": "object",
        "required": ["data"],
        "properties": {
            "data": {"type": "array", "items": {"$ref": "#/components/schemas/AllowEntry"}},
            "meta": {
                "type": "object",
                "properties": {
                    "total": {"type": "integer"},
                    "limit": {"type": "integer", "description": "the plan's entries"},
                },
            },
        },
    },
}
_BODY = {
    "type": "object",
    "required": ["entries"],
    "properties": {
        "entries": {
            "type": "array",
            "minItems": 1,
            "maxItems": ENTRIES_PER_REQUEST,
            "items": {
                "oneOf": [
                    _ENTRY_TEXT,
                    {
                        "type": "object",
                        "required": ["value"],
                        "properties": {"value": _ENTRY_TEXT, "note": {"type": "string", "maxLength": NOTE_MAX}},
                    },
                ]
            },
        }
    },
}
_ENTRIES = {"application/json": {"$ref": "#/components/schemas/AllowEntries"}}
_SCOPE = (
    f"Scope `{SCOPE_FEEDS}`, every plan. The account's allowlist: its keys' IOC exports (also of saved "
    "feeds) and TAXII pages leave these values out (lists, search and lookups still show them). "
)
_NOT_FOUND = error_response("not_found: no entry of yours has this id")
_ENTRY_ID = param("id", {"type": "string"}, "The entry's id.", where="path")
_ENTRY_ID = param("id", {"type": "string"}, "The entry's id.", where="path")
OPENAPI_PATHS: dict[str, Any] = {
    "/api/v1/allowlist": {
        **operation("feeds", "Your allowlist", _SCOPE + "Oldest first.", [], {"200": ok("Entries", _ENTRIES)}),
        **operation(
            "feeds",
            "Add allowlist entries",
            _SCOPE + f"Up to {ENTRIES_PER_REQUEST:,} entries a request, "
            f"{per_tier('max_allowlist')} in all; an entry already held comes back as held.",
            [],
            {
                "201": ok("The entries as stored", _ENTRIES),
                "400": bad_request(
                    "invalid_body, or invalid_parameter naming `entries[i]`: an entry "
                    "that is no value, network or domain"
                ),
                "403": error_response("insufficient_scope, or quota_exceeded (details: limit, tier, upgrade_url)"),
            },
            method="post",
            body=_BODY,
        ),
    },
    "/api/v1/allowlist/{id}": {
        **operation(
            "feeds",
            "One allowlist entry",
            _SCOPE,
            [_ENTRY_ID],
            {
                "200": ok("The entry", {"application/json": {"$ref": "#/components/schemas/AllowEntry"}}),
                "404": _NOT_FOUND,
            },
        ),
        **operation(
            "feeds",
            "Delete an allowlist entry",
            _SCOPE,
            [_ENTRY_ID],
            {"204": {"description": "Deleted", "headers": RATE_HEADERS}, "404": _NOT_FOUND},
            method="delete",
        ),
    },
}
