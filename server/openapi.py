"""GET /api/openapi.json: the OpenAPI 3.0.3 description (version 1.0.0) that grows with each endpoint.

Each route module contributes ``OPENAPI_PATHS``; the shared parts (error envelope, security schemes,
rate-limit headers, common error responses) live here so every path refers to one definition.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from config.tiers import LOOKUP_VALUES_PER_UNIT
from exporters.registry import format_costs
from server.base import BaseHandler
from server.context import AppContext
from server.openapi_parts import MALFORMED, SECURITY, rate_limits_sentence

_RATE_HEADERS = {
    "X-RateLimit-Limit": {"description": "Requests per minute of the key's tier", "schema": {"type": "integer"}},
    "X-RateLimit-Remaining": {"description": "Requests left in the rolling minute", "schema": {"type": "integer"}},
    "X-RateLimit-Reset": {"description": "Unix time (UTC seconds): on a 429, when the request fits again (as "
                                         "Retry-After); otherwise when the whole per-minute budget is back",
                          "schema": {"type": "integer"}},
    "X-Request-Id": {"description": "Request id (`req_...`), also in error envelopes", "schema": {"type": "string"}},
}


def _error_response(description: str) -> dict[str, Any]:
    return {"description": description, "headers": _RATE_HEADERS,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


COMPONENTS: dict[str, Any] = {
    "securitySchemes": {
        "BearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "sk_live_...",
                       "description": "Recommended: `Authorization: Bearer <API_KEY>`."},
        "ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key",
                         "description": "Equivalent to Bearer; use it when intermediaries rewrite Authorization."},
        "ApiKeyQuery": {"type": "apiKey", "in": "query", "name": "api_key",
                        "description": "Accepted but discouraged: URLs end up in logs and browser history."},
        "BasicAuth": {"type": "http", "scheme": "basic",
                      "description": "TAXII and the exports only (for SIEM connectors configured with a user "
                                     "name and a password): any user name, the API key as the password."},
    },
    "headers": _RATE_HEADERS,
    "schemas": {
        "Error": {
            "type": "object", "required": ["error"],
            "properties": {"error": {
                "type": "object", "required": ["code", "message", "request_id"],
                "properties": {
                    "code": {"type": "string", "description": (
                        "missing_api_key, invalid_api_key, expired_api_key (401); insufficient_scope (403); "
                        "not_found (404); method_not_allowed (405); rate_limit_exceeded (429); "
                        "invalid_parameter, conflicting_parameters, q_invalid, invalid_cursor, "
                        "deep_paging_unsupported (400); service_unavailable (503); internal_error (500)")},
                    "message": {"type": "string"},
                    "details": {"type": "object", "additionalProperties": True, "description": (
                        "insufficient_scope: required_scope, your_scopes, upgrade_url; rate_limit_exceeded: "
                        "limit, reset_at, tier, upgrade_url; invalid_parameter: parameter")},
                    "request_id": {"type": "string", "pattern": "^req_[0-9a-f]+$"},
                },
            }},
        },
        "Health": {"type": "object", "required": ["status"], "properties": {
            "status": {"type": "string", "enum": ["ok", "degraded"]},
            "version": {"type": "string"}, "started_at": {"type": "string"},
            "database": {"type": "object", "additionalProperties": True},
            "cache": {"type": "object", "additionalProperties": True},
        }},
    },
    "responses": {
        "BadRequest": _error_response(MALFORMED),
        "Unauthorized": {**_error_response("missing_api_key, invalid_api_key or expired_api_key (a deleted, "
                                           "deactivated or expired key, a rotated key's former secret after its "
                                           "grace, or malformed Basic credentials)"),
                         "headers": {**_RATE_HEADERS, "WWW-Authenticate": {
                             "description": "The schemes that work here: Bearer, and Basic on TAXII and the exports",
                             "schema": {"type": "string"}}}},
        "Forbidden": _error_response("insufficient_scope: the key lacks the scope or the plan"),
        "NotFound": _error_response("not_found"),
        "TooManyRequests": _error_response("rate_limit_exceeded; see Retry-After and X-RateLimit-Reset"),
        "Unavailable": _error_response("service_unavailable: a backing service is down"),
    },
}

DESCRIPTION = f"""Threat-intelligence API: enriched security news articles, IOCs and their exports, and a
read-only TAXII 2.1 server.

Authentication: every `/api/` request except this description needs an API key (`sk_live_...`), sent as
`Authorization: Bearer <API_KEY>` (recommended), `X-API-Key: <API_KEY>`, or the discouraged `api_key`
query parameter. TAXII and the export endpoints (`/api/v1/iocs/{{format}}`, `/api/v1/articles`) also take
HTTP Basic with any user name and the API key as the password, as SIEM TAXII connectors send it.
Unknown query parameters are ignored. A known one is read exactly as sent and is given
at most once (a list is one comma-separated value; only TAXII `match[...]` filters may be repeated): a
known parameter that is malformed, given twice (`?limit=3&limit=4`, in either order), empty or blank
(`?window=`), or holding a control character (`?window=%1F`) answers 400 `invalid_parameter` naming it in
`details.parameter`. Parameters that exclude each other answer 400 `conflicting_parameters`; each says so
in its description. `deep_paging_unsupported`, `q_invalid` and `invalid_cursor` answer 400.

Rate limits are per key on rolling windows ({rate_limits_sentence()}).
A request costs its format's multiplier (`X-Format-Cost-Multiplier`): {", ".join(f"{k} {v}" for k, v in
format_costs().items())}. A bulk lookup (`POST /api/v1/lookup`) costs one unit per {LOOKUP_VALUES_PER_UNIT}
values, rounded up, and a list of sightings (`POST /api/v1/sightings`) one unit per {LOOKUP_VALUES_PER_UNIT}
reports (`X-RateLimit-Cost`).
"""


def build_document(fragments: Iterable[Mapping[str, Any]],
                   schemas: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The whole description from the route modules' path fragments and schemas."""
    paths: dict[str, Any] = {}
    for fragment in fragments:
        paths.update(fragment)
    components = {**COMPONENTS, "schemas": dict(COMPONENTS["schemas"])}
    for extra in schemas:
        components["schemas"].update(extra)
    return {
        "openapi": "3.0.3",
        "info": {"title": "ctiwire Threat Intelligence API", "version": "1.0.0", "description": DESCRIPTION},
        "servers": [{"url": "/"}],
        "security": SECURITY,
        "tags": [{"name": n} for n in ("articles", "iocs", "feeds", "exports", "stream", "taxii", "service")],
        "paths": dict(sorted(paths.items())),
        "components": components,
    }


class OpenApiHandler(BaseHandler):
    """Served without a key: a description holds no data and API tools fetch it unauthenticated."""

    public = True

    def initialize(self, ctx: AppContext, document: bytes = b"") -> None:
        super().initialize(ctx)
        self.document = document

    async def get(self) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(self.document)


def routes(ctx: AppContext, document: dict[str, Any]) -> list[tuple[str, type, dict[str, Any]]]:
    return [(r"/api/openapi\.json", OpenApiHandler, {"ctx": ctx, "document": orjson.dumps(document)})]


OPENAPI_PATHS: dict[str, Any] = {
    "/api/openapi.json": {"get": {
        "tags": ["service"], "summary": "This description", "security": [],
        "responses": {"200": {"description": "OpenAPI 3.0.3 document",
                              "content": {"application/json": {"schema": {"type": "object"}}}}},
    }},
}
