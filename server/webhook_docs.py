"""The OpenAPI description of webhooks (``server.webhooks``): every operation, its bodies and errors."""

from __future__ import annotations

from typing import Any

from config.tiers import SCOPE_WEBHOOKS
from server.feed_params import VALUES_MAX
from server.ioc_params import INDUSTRY_ALIASES
from server.openapi_parts import RATE_HEADERS, ok, operation, param, per_tier
from server.stream_params import CATEGORY_VALUES
from store.ports.events import EVENT_KINDS
from store.records import CONFIDENCES, INDUSTRY_TAGS, IOC_TYPES, SEVERITY_LABELS

_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "headers": RATE_HEADERS, "content": _ERROR}


def _values(
    allowed: tuple[str, ...] | None = None, pattern: str | None = None, most: int = VALUES_MAX
) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "string", "minLength": 1}
    if allowed:
        item["enum"] = list(allowed)
    if pattern:
        item["pattern"] = pattern
    return {"type": "array", "maxItems": most, "items": item}


_FILTER_VALUES: dict[str, dict[str, Any]] = {
    "kinds": _values(EVENT_KINDS),
    "type": _values(IOC_TYPES),
    "confidence": _values(CONFIDENCES),
    "industry": _values((*INDUSTRY_TAGS, *INDUSTRY_ALIASES)),
    "category": _values(CATEGORY_VALUES),
    "severity": _values(SEVERITY_LABELS),
    "min_severity": _values(pattern=r"^(10(\.0+)?|[0-9](\.[0-9]+)?)$", most=1),
    "source": _values(pattern=r"^[^,\x00-\x1f\x7f]*[^\s,\x00-\x1f\x7f][^,\x00-\x1f\x7f]*$"),
}
_STATE = {"type": "string", "enum": ["active", "retrying", "paused"]}
_NULLABLE_TEXT = {"type": "string", "nullable": True}
_HOOK_PROPERTIES: dict[str, Any] = {
    "id": {"type": "string"},
    "url": {"type": "string"},
    "filters": {"$ref": "#/components/schemas/WebhookFilters"},
    "state": _STATE,
    "last_event_id": {**_NULLABLE_TEXT, "description": "The last event id the receiver acknowledged"},
    "failures": {"type": "integer", "description": "Failed deliveries in a row"},
    "next_attempt": {"type": "string", "format": "date-time", "nullable": True},
    "last_error": _NULLABLE_TEXT,
    "created_at": {"type": "string", "format": "date-time"},
}
_REQUIRED = ["id", "url", "filters", "state", "failures", "created_at"]
OPENAPI_SCHEMAS: dict[str, Any] = {
    "WebhookFilters": {
        "type": "object",
        "additionalProperties": False,
        "properties": _FILTER_VALUES,
        "description": "The stream's filters by its parameter names (GET /api/v1/stream), each a list or one "
        "comma-separated string; severity and min_severity exclude each other.",
    },
    "Webhook": {"type": "object", "required": _REQUIRED, "properties": _HOOK_PROPERTIES},
    "WebhookCreated": {
        "type": "object",
        "required": [*_REQUIRED, "secret"],
        "properties": {
            **_HOOK_PROPERTIES,
            "secret": {"type": "string", "description": "The signing secret: shown in this answer only"},
        },
    },
    "WebhookDelivery": {
        "type": "object",
        "required": ["at", "last_event_id", "events", "ok"],
        "properties": {
            "at": {"type": "string", "format": "date-time"},
            "last_event_id": {"type": "string"},
            "events": {"type": "integer"},
            "ok": {"type": "boolean"},
            "status": {"type": "integer", "nullable": True},
            "latency_ms": {"type": "number"},
            "error": _NULLABLE_TEXT,
        },
    },
    "WebhookDetail": {
        "type": "object",
        "required": [*_REQUIRED, "deliveries"],
        "properties": {
            **_HOOK_PROPERTIES,
            "deliveries": {"type": "array", "items": {"$ref": "#/components/schemas/WebhookDelivery"}},
        },
    },
    "WebhookList": {
        "type": "object",
        "required": ["data", "meta"],
        "properties": {
            "data": {"type": "array", "items": {"$ref": "#/components/schemas/Webhook"}},
            "meta": {"type": "object", "properties": {"total": {"type": "integer"}, "limit": {"type": "integer"}}},
        },
    },
}
_SCOPE = f"Scope `{SCOPE_WEBHOOKS}`, Pro plan. "
_FORBIDDEN = _error(f"insufficient_scope (the key lacks scope `{SCOPE_WEBHOOKS}`, or the plan has no webhooks)")
_NOT_FOUND = _error("not_found: no webhook of yours has this id (another account's webhook is not found either)")
_HOOK_ID = param("id", {"type": "string"}, "The webhook's id.", where="path")
_DELIVERY = (
    "Events matching the filters are POSTed in batches of up to 100 as one JSON object "
    '(`{"webhook_id", "events": [{"id", "event", "data"}]}`), in order, with headers `X-Ctiwire-Event-Id` '
    '(the batch\'s last id) and `X-Ctiwire-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "t.body" with the '
    "secret>`. A 2xx within 10 s acknowledges; anything else (a redirect included: none is followed) is retried "
    "with exponential backoff over more than a day, then the webhook is paused until resumed. URLs that "
    "resolve to loopback, private, link-local or metadata addresses are refused."
)


def _op(
    summary: str,
    description: str,
    responses: dict[str, Any],
    parameters: list[dict[str, Any]] | None = None,
    body: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One operation of this tag (``openapi_parts.operation``): its own 403, no common 400; ``body`` is the
    JSON request body's schema."""
    spec = operation('stream', summary, _SCOPE + description, parameters or [], {"403": _FORBIDDEN, **responses},
                     errors=("401", "429"), body=body)
    fragment: dict[str, Any] = spec["get"]
    return fragment


_BODY = {
    "type": "object",
    "required": ["url"],
    "properties": {
        "url": {"type": "string", "minLength": 1, "maxLength": 2048, "description": "http(s) URL"},
        "filters": {"$ref": "#/components/schemas/WebhookFilters"},
    },
}
_JSON = "application/json"
OPENAPI_PATHS: dict[str, Any] = {
    "/api/v1/webhooks": {
        "get": _op(
            "List your webhooks",
            "Oldest first; the secrets are never shown again.",
            {"200": ok("Webhooks", {_JSON: {"$ref": "#/components/schemas/WebhookList"}})},
        ),
        "post": _op(
            "Create a webhook",
            f"{per_tier('max_webhooks')} webhooks per account. It receives the events appended from now on. "
            + _DELIVERY,
            {
                "201": ok(
                    "The new webhook, with its signing secret (shown once)",
                    {_JSON: {"$ref": "#/components/schemas/WebhookCreated"}},
                    {"Location": {"schema": {"type": "string"}}},
                ),
                "400": _error(
                    "invalid_body, or invalid_parameter naming `url` (not http(s), or an address "
                    "refused) or `filters.<filter>` in details.parameter"
                ),
                "403": _error(
                    "insufficient_scope, or quota_exceeded: the plan's webhooks are all in use; "
                    "details: limit, tier, upgrade_url"
                ),
                "413": _error("payload_too_large: the body is over 64 KiB"),
            },
            body=_BODY,
        ),
    },
    "/api/v1/webhooks/{id}": {
        "get": _op(
            "One webhook and its recent deliveries",
            "Its state (`paused` after repeated failure, with `last_error`) and the newest deliveries first, "
            "each with its status and latency.",
            {"200": ok("The webhook", {_JSON: {"$ref": "#/components/schemas/WebhookDetail"}}), "404": _NOT_FOUND},
            [_HOOK_ID],
        ),
        "patch": _op(
            "Pause or resume a webhook",
            'Body `{"paused": false}` resumes a paused webhook: deliveries start again at once from the last '
            'acknowledged event; `{"paused": true}` pauses it.',
            {
                "200": ok("The webhook", {_JSON: {"$ref": "#/components/schemas/Webhook"}}),
                "400": _error('invalid_parameter: the body is not {"paused": true|false}'),
                "404": _NOT_FOUND,
            },
            [_HOOK_ID],
            {
                "type": "object",
                "required": ["paused"],
                "additionalProperties": False,
                "properties": {"paused": {"type": "boolean"}},
            },
        ),
        "delete": _op(
            "Delete a webhook",
            "Deliveries stop.",
            {"204": {"description": "Deleted", "headers": RATE_HEADERS}, "404": _NOT_FOUND},
            [_HOOK_ID],
        ),
    },
}
