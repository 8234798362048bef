"""The OpenAPI description of saved feeds (``server.feeds``): every operation, its bodies and errors."""

from __future__ import annotations

from typing import Any

from config.tiers import SCOPE_FEEDS
from exporters.registry import EXPORTERS
from server.exports import WINDOW_PARAMS, export_operation
from server.feed_params import NAME_MAX, VALUES_MAX
from server.ioc_params import INDUSTRY_ALIASES, SINCE_PARAM
from server.iocs import PAGE_PARAMS
from server.openapi_parts import ERRORS, RATE_HEADERS, ok, operation, param, per_tier
from store.decay import STATUSES
from store.records import CONFIDENCES, INDUSTRY_TAGS, IOC_TYPES, SEVERITY_LABELS, SOURCE_CATEGORIES

_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "headers": RATE_HEADERS, "content": _ERROR}


_NOT_FOUND = _error("not_found: no feed of yours has this id (another account's feed is not found either)")
_BAD_BODY = _error(
    "invalid_body (not a JSON object), or invalid_parameter naming `name` or `filters.<filter>` "
    "in details.parameter (a value the IOC list's parameter of that name refuses)"
)
_FORBIDDEN = _error("insufficient_scope: the key lacks scope `feeds`")
_QUOTA = _error(
    f"insufficient_scope, or quota_exceeded: the plan's saved feeds are all in use "
    f"({per_tier('max_feeds')}); details: limit, tier, upgrade_url"
)
_TAKEN = _error("name_taken: you already have a feed of this name")
_FEED_ID = param("id", {"type": "string", "format": "uuid"}, "The feed's id.", where="path")


def _values(allowed: tuple[str, ...] | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "string", "minLength": 1, **({"enum": list(allowed)} if allowed else {})}
    return {"type": "array", "maxItems": VALUES_MAX, "items": item}


_INDUSTRIES = (*INDUSTRY_TAGS, *INDUSTRY_ALIASES)
_FILTER_VALUES: dict[str, dict[str, Any]] = {
    "type": _values(IOC_TYPES),
    "confidence": _values(CONFIDENCES),
    "category": _values(SOURCE_CATEGORIES),
    "industry": _values(_INDUSTRIES),
    "source": _values(),
    "threat_actor": _values(),
    "severity": _values(SEVERITY_LABELS),
    "status": _values(STATUSES),
    "min_score": {"type": "array", "maxItems": 1, "items": {"type": "string", "pattern": "^(100|[1-9]?[0-9])$"},
                  "description": "One score from 0 to 100, as a string."},
}

OPENAPI_SCHEMAS: dict[str, Any] = {
    "FeedFilters": {
        "type": "object",
        "additionalProperties": False,
        "properties": _FILTER_VALUES,
        "description": "The IOC list's filters by its parameter names (GET /api/v1/iocs), each any-match, all "
        "ANDed; a list, or one comma-separated string. An empty object matches every record.",
    },
    "Feed": {
        "type": "object",
        "required": ["id", "name", "filters", "created_at", "modified_at", "links"],
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "name": {"type": "string"},
            "filters": {"$ref": "#/components/schemas/FeedFilters"},
            "created_at": {"type": "string", "format": "date-time"},
            "modified_at": {"type": "string", "format": "date-time"},
            "links": {
                "type": "object",
                "required": ["self", "iocs"],
                "properties": {
                    "self": {"type": "string"},
                    "iocs": {"type": "string"},
                    "taxii": {"type": "string", "description": "The feed's TAXII 2.1 collection (Pro)"},
                    "exports": {
                        "type": "object",
                        "additionalProperties": {"type": "string"},
                        "description": "One URL per export format (Pro)",
                    },
                },
            },
        },
    },
    "FeedList": {
        "type": "object",
        "required": ["data", "meta"],
        "properties": {
            "data": {"type": "array", "items": {"$ref": "#/components/schemas/Feed"}},
            "meta": {
                "type": "object",
                "properties": {
                    "total": {"type": "integer"},
                    "limit": {"type": "integer", "description": "The plan's feeds"},
                },
            },
        },
    },
}
_NAME = {"type": "string", "minLength": 1, "maxLength": NAME_MAX}
_FILTERS = {"$ref": "#/components/schemas/FeedFilters"}


def _body(required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        **({"required": required} if required else {}),
        "properties": {"name": _NAME, "filters": _FILTERS},
    }


def _op(
    summary: str,
    description: str,
    responses: dict[str, Any],
    parameters: list[dict[str, Any]] | None = None,
    body: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One operation of this tag (``openapi_parts.operation``): its own 403, no common 400; ``body`` is the
    JSON request body's schema."""
    spec = operation('feeds', summary, description, parameters or [], {"403": _FORBIDDEN, **responses},
                     errors=("401", "429"), body=body)
    fragment: dict[str, Any] = spec["get"]
    return fragment


_FEED = {"application/json": {"$ref": "#/components/schemas/Feed"}}
_SCOPE = f"Scope `{SCOPE_FEEDS}`. "
OPENAPI_PATHS: dict[str, Any] = {
    "/api/v1/feeds": {
        "get": _op(
            "List your saved feeds",
            _SCOPE + "Oldest first.",
            {"200": ok("Feeds", {"application/json": {"$ref": "#/components/schemas/FeedList"}})},
        ),
        "post": _op(
            "Save a feed",
            _SCOPE + f"A named set of IOC filters ({per_tier('max_feeds')} feeds per "
            "account). Free accounts read a feed as JSON only (its `iocs` link); Pro also through TAXII "
            "(the feed is a collection of the API root) and every export format.",
            {
                "201": ok("The new feed", _FEED, {"Location": {"schema": {"type": "string"}}}),
                "400": _BAD_BODY,
                "403": _QUOTA,
                "409": _TAKEN,
            },
            body=_body(["name"]),
        ),
    },
    "/api/v1/feeds/{id}": {
        "get": _op("One saved feed", _SCOPE, {"200": ok("The feed", _FEED), "404": _NOT_FOUND}, [_FEED_ID]),
        "patch": _op(
            "Rename a feed or replace its filters",
            _SCOPE + "Given `filters` replace the old ones whole.",
            {"200": ok("The feed", _FEED), "400": _BAD_BODY, "404": _NOT_FOUND, "409": _TAKEN},
            [_FEED_ID],
            _body([]),
        ),
        "delete": _op(
            "Delete a feed",
            _SCOPE,
            {"204": {"description": "Deleted", "headers": RATE_HEADERS}, "404": _NOT_FOUND},
            [_FEED_ID],
        ),
    },
    "/api/v1/feeds/{id}/iocs": {
        "get": _op(
            "A saved feed's IOCs",
            "Scope read:iocs, every plan. The IOC list (GET /api/v1/iocs) with the feed's "
            "filters in place of the filter parameters; since, limit and offset as there.",
            {
                "200": ok("IOC page", {"application/json": {"$ref": "#/components/schemas/IocList"}}),
                "400": ERRORS["400"],
                "403": ERRORS["403"],
                "404": _NOT_FOUND,
            },
            [_FEED_ID, SINCE_PARAM, *PAGE_PARAMS],
        )
    },
    **{
        f"/api/v1/feeds/{{id}}/export/{fmt}": export_operation(
            fmt, "Export a saved feed", [_FEED_ID, SINCE_PARAM, *WINDOW_PARAMS], {"404": _NOT_FOUND}
        )
        for fmt in EXPORTERS
    },
}
