"""POST /api/v1/sightings: an account reports values it saw, or found to be false positives."""

from __future__ import annotations

from typing import Any

from config.tiers import LOOKUP_VALUES_PER_UNIT, SCOPE_SIGHTINGS
from exporters.lookup import MAX_VALUE_CHARS
from exporters.sightings import (
    CLOCK_SKEW,
    FIELDS,
    MAX_NOTE_CHARS,
    MAX_PROBLEMS,
    MAX_REPORTS,
    ReportError,
    read_reports,
    report_sightings,
)
from server.bodies import MAX_BODY_BYTES, JsonBodyHandler
from server.context import AppContext
from server.errors import BadRequest
from server.iocs import SIGHTING_COUNT_FIELDS
from server.lookup import lookup_cost
from server.openapi_parts import bad_request, error_response, header, ok, operation
from store.records import IOC_TYPES, SIGHTING_KINDS, utcnow


class SightingsHandler(JsonBodyHandler):
    """One report or a list of them, recorded whole or refused whole; every plan within its rate budget."""

    scope = SCOPE_SIGHTINGS

    async def post(self) -> None:
        now = utcnow()
        try:
            reports = read_reports(self.json_body(), now)
        except ReportError as exc:
            raise BadRequest(str(exc), code="invalid_sightings", details={"errors": exc.problems}) from exc
        cost = lookup_cost(len(reports))
        if cost > 1:  # one unit was charged with the headers (BaseHandler.prepare)
            await self.charge(self.principal, cost - 1)
        quorum = self.ctx.settings.false_positive_quorum
        results = await report_sightings(self.ctx.stores, reports, self.principal.user.id, now, quorum)
        self.set_header("X-RateLimit-Cost", str(cost))
        self.write_json({"meta": {"count": len(results), "cost": cost}, "data": results})


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [(r"/api/v1/sightings", SightingsHandler, {"ctx": ctx})]


_COUNT = {"type": "integer", "minimum": 0}
_REPORT: dict[str, Any] = {
    "type": "object",
    "required": ["value", "kind"],
    "additionalProperties": False,
    "properties": {
        "value": {
            "type": "string",
            "maxLength": MAX_VALUE_CHARS,
            "description": "The indicator, defanged forms accepted (hxxp, [.], (dot), [at]).",
        },
        "type": {
            "type": "string",
            "enum": list(IOC_TYPES),
            "description": "Optional: the value must be of this type (default: detected).",
        },
        "kind": {"type": "string", "enum": list(SIGHTING_KINDS)},
        "observed_at": {
            "type": "string",
            "format": "date-time",
            "description": f"When it was observed (default: now); up to {CLOCK_SKEW.seconds} s ahead of "
            "the server's clock is read as now, later is refused.",
        },
        "note": {"type": "string", "maxLength": MAX_NOTE_CHARS},
    },
}
OPENAPI_SCHEMAS: dict[str, Any] = {
    "SightingReport": _REPORT,
    "SightingResult": {
        "type": "object",
        "required": ["input", "type", "value", "kind", "known", "sightings", "false_positives"],
        "properties": {
            "input": {"type": "string", "description": "the value as sent"},
            "type": {"type": "string", "enum": list(IOC_TYPES)},
            "value": {"type": "string", "description": "normalised (refanged)"},
            "kind": {"type": "string", "enum": list(SIGHTING_KINDS)},
            "known": {"type": "boolean", "description": "whether the service holds a record of the value"},
            **SIGHTING_COUNT_FIELDS,
        },
    },
    "Sightings": {
        "type": "object",
        "required": ["meta", "data"],
        "properties": {
            "meta": {
                "type": "object",
                "required": ["count", "cost"],
                "properties": {
                    "count": _COUNT,
                    "cost": {"type": "integer", "minimum": 1, "description": "rate-limit units charged"},
                },
            },
            "data": {"type": "array", "items": {"$ref": "#/components/schemas/SightingResult"}},
        },
    },
}
_BODY: dict[str, Any] = {
    "oneOf": [
        {"$ref": "#/components/schemas/SightingReport"},
        {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_REPORTS,
            "items": {"$ref": "#/components/schemas/SightingReport"},
        },
    ]
}
_DESCRIPTION = (
    "Scope sightings (every plan). Report that you saw a value (`seen`) or found it to be a false positive "
    f"(`false_positive`): one report, or a list of up to {MAX_REPORTS:,}. Values are read as the bulk lookup reads "
    "them (defanged forms accepted). A list is recorded whole or not at all: any invalid report answers 400 "
    f"`invalid_sightings` with `details.errors` (at most {MAX_PROBLEMS}), each naming the report's `index`, the "
    f"`field` and the `reason`. Fields other than {', '.join(FIELDS)} are refused. "
    "Each account counts once per value and kind, however often it reports: the IOC record's `sightings` and "
    "`false_positives` are distinct accounts, shown in the IOC resource, GET and POST /api/v1/lookup; a change "
    "moves the record's `modified`. A `false_positive` leaves the value out of your account's exports and TAXII "
    "pages at once; reports from a configured number of distinct accounts (`CTIWIRE_FALSE_POSITIVE_QUORUM`, "
    "default 3) revoke it for everyone. Every report is kept for the audit, with the account (never the key). "
    f"Cost: one rate-limit unit per {LOOKUP_VALUES_PER_UNIT} reports, rounded up (1,000 reports cost 10, a Free "
    f"key's whole minute), reported in `X-RateLimit-Cost`. The body is at most {MAX_BODY_BYTES:,} bytes "
    "(above: 413)."
)
OPENAPI_PATHS: dict[str, Any] = {
    "/api/v1/sightings": operation(
        "iocs",
        "Report sightings and false positives",
        _DESCRIPTION,
        [],
        {
            "200": ok(
                "Each report's value and its counts after it, in order",
                {"application/json": {"$ref": "#/components/schemas/Sightings"}},
                {"X-RateLimit-Cost": header("Rate-limit units this request cost", "integer")},
            ),
            "400": bad_request(
                "a body that is no JSON (`invalid_body`); an empty list, more than "
                f"{MAX_REPORTS:,} reports, or an invalid report (`invalid_sightings`, with `details.errors`)"
            ),
            "413": error_response(f"payload_too_large: a body above {MAX_BODY_BYTES:,} bytes"),
        },
        method="post",
        body=_BODY,
    )
}
