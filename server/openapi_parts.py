"""Small builders for OpenAPI fragments, so each route module documents itself in a few lines."""

from __future__ import annotations

from typing import Any

from config.tiers import TIERS
from server.params import CONTROL_CHARACTERS, MAX_INTEGER

ERRORS = {
    "400": {"$ref": "#/components/responses/BadRequest"},
    "401": {"$ref": "#/components/responses/Unauthorized"},
    "403": {"$ref": "#/components/responses/Forbidden"},
    "429": {"$ref": "#/components/responses/TooManyRequests"},
    "503": {"$ref": "#/components/responses/Unavailable"},
}
# What every 400 invalid_parameter means (server.params).
MALFORMED = "A malformed, repeated, empty or control-character known parameter (named in details.parameter)"
# Every operation's ways to send the key (spec, Authentication 2-3), and the same plus HTTP Basic (the key
# as the password) where SIEM connectors call: TAXII and the exports (server.credentials).
SECURITY: list[dict[str, list[str]]] = [{"BearerAuth": []}, {"ApiKeyHeader": []}, {"ApiKeyQuery": []}]
SECURITY_WITH_BASIC = [*SECURITY, {"BasicAuth": []}]
RATE_HEADERS = {name: {"$ref": f"#/components/headers/{name}"}
                for name in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Request-Id")}


def param(name: str, schema: dict[str, Any], description: str, *, required: bool = False,
          where: str = "query") -> dict[str, Any]:
    if where == "query" and schema.get("type") == "string":
        schema = _filled(schema)
    return {"name": name, "in": where, "required": required or where == "path", "schema": schema,
            "description": description}


# A value with a non-blank character and no control character (server.params.single_value refuses the rest).
FILLED = f"^[^{CONTROL_CHARACTERS}]*[^\\s{CONTROL_CHARACTERS}][^{CONTROL_CHARACTERS}]*$"


def _filled(schema: dict[str, Any]) -> dict[str, Any]:
    """An empty, blank or control-character value is a 400 (server.params.single_value): a free string
    says so with a pattern; an enum, a format or a pattern of its own already excludes them."""
    if any(key in schema for key in ("enum", "pattern", "format")):
        return schema
    return {**schema, "minLength": max(1, schema.get("minLength", 1)), "pattern": FILLED}


def csv_param(name: str, description: str, values: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A comma-separated list parameter (sent as one string); with ``values``, a pattern admitting exactly
    what server.params.Params.csv accepts: those values, blank items and spaces around commas, but not
    a value that is blank as a whole (server.params.single_value)."""
    text = description + (f" Values: {', '.join(values)}." if values else "")
    schema: dict[str, Any] = {"type": "string"}
    if values:
        schema["pattern"] = list_pattern("|".join(v.replace(".", "\\.") for v in values))
    return param(name, schema, text)


def list_pattern(one: str) -> str:
    """The pattern of a comma-separated list of items matching ``one``, read as Params.csv and the TAXII
    filters read it: blank items and spaces around commas allowed, a value blank as a whole not."""
    item = f"({one})"
    return f"^(?: *{item} *|(?: *{item}? *,)+ *{item}? *)$"


def limit_param(description: str, default: int | None = None) -> dict[str, Any]:
    """Every ``limit``: out-of-range values are clamped (spec, Limits 3; server.windows.cap_limit), so
    there is no ``minimum``; only a value past ``MAX_INTEGER`` (or not an integer) is a 400."""
    schema: dict[str, Any] = {"type": "integer", "maximum": MAX_INTEGER}
    if default is not None:
        schema["default"] = default
    return param("limit", schema, f"{description} Values below 1 are read as 1.")


# A date-time parameter (RFC 3339).
DATE_TIME_PARAM: dict[str, Any] = {"type": "string", "format": "date-time"}


def operation(tag: str, summary: str, description: str, parameters: list[dict[str, Any]],
              responses: dict[str, Any], *, errors: tuple[str, ...] = ("400", "401", "403", "429"),
              method: str = "get", body: dict[str, Any] | None = None, basic: bool = False) -> dict[str, Any]:
    """One operation as a path item fragment (``{method: ...}``); ``body`` is its JSON request body schema;
    ``basic`` when it also takes HTTP Basic (the key as the password)."""
    all_responses = dict(responses)
    for code in errors:
        all_responses.setdefault(code, ERRORS[code])
    spec: dict[str, Any] = {"tags": [tag], "summary": summary, "description": description, "parameters": parameters,
                            "responses": all_responses}
    if body is not None:
        spec["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    if basic:
        spec["security"] = SECURITY_WITH_BASIC
    return {method: spec}


def error_response(description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    """A response carrying the error envelope, with the headers it carries beside the rate-limit ones."""
    return {"description": description, "headers": {**RATE_HEADERS, **(headers or {})},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def bad_request(description: str = "", headers: dict[str, Any] | None = None) -> dict[str, Any]:
    """An operation's own 400: the common one (a malformed known parameter) plus the rules its schema
    cannot state, such as parameters that exclude each other (OpenAPI 3.0 has no keyword for that), and
    the headers it carries beside the rate-limit ones (``tier_headers``)."""
    return error_response(f"{MALFORMED}; also {description}" if description else MALFORMED, headers)


def header(description: str, kind: str = "string") -> dict[str, Any]:
    return {"description": description, "schema": {"type": kind}}


# Sent with every answer once the key is known, a 400 included (server.base.BaseHandler.tier_headers).
LOOKBACK_HEADER = {"X-Tier-Lookback-Days": header("Effective lookback in days; on a 400 too", "integer")}
COST_HEADER = {"X-Format-Cost-Multiplier": header("Rate-limit cost multiplier of the request's format; on a 400 "
                                                  "too", "integer")}


def ok(description: str, media: dict[str, dict[str, Any]], headers: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"description": description, "headers": {**RATE_HEADERS, **(headers or {})},
            "content": {m: {"schema": s} for m, s in media.items()}}


def per_tier(attribute: str, unit: str = "") -> str:
    """``Free 100, Pro 10,000``: a tier number as the descriptions state it, read from config.tiers, so a
    change of a limit changes the docs; never typed by hand."""
    return ", ".join(f"{tier.name.capitalize()} {getattr(tier, attribute):,}{unit}" for tier in TIERS.values())


def rate_limits_sentence() -> str:
    return "; ".join(f"{t.name.capitalize()} {t.requests_per_minute:,}/min and {t.requests_per_day:,}/day"
                     for t in TIERS.values())


def article_caps_sentence() -> str:
    """Each tier's JSON page cap, and its NDJSON/CSV export cap where the tier has those formats."""
    return "; ".join(f"{t.name.capitalize()} {t.articles_max:,}" + (
        f", NDJSON/CSV {t.articles_export_max:,}" if "ndjson" in t.article_formats else "") for t in TIERS.values())
