"""GET /api/v1/iocs/search and GET /api/v1/lookup (spec, IOCs)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from config.tiers import LOOKUP_VALUES_PER_UNIT, SCOPE_IOCS, TIERS, Tier
from exporters.lookup import MAX_VALUE_CHARS, IndicatorError, bulk_lookup, lookup, read_indicator
from server.bodies import MAX_BODY_BYTES, JsonBodyHandler
from server.context import AppContext
from server.errors import BadRequest, bad_param
from server.ioc_params import COUNT_STRATEGY_PARAM, INCLUDE_WARNINGLISTED_PARAM, parse_ioc_request
from server.iocs import (
    CURSOR_PARAM,
    OFFSET_PARAM,
    SIGHTING_COUNT_FIELDS,
    STIX_ID_DOC,
    WINDOW_HEADERS,
    IocListHandler,
    write_ioc_list,
)
from server.openapi_parts import (
    LOOKBACK_HEADER,
    bad_request,
    csv_param,
    error_response,
    header,
    limit_param,
    ok,
    operation,
    param,
    per_tier,
)
from server.windows import lookup_window
from store.ioctypes import REGISTRY
from store.records import IOC_TYPES, utcnow


def _indicator(raw: str, name: str, given_type: str | None) -> tuple[str, str]:
    try:
        return read_indicator(raw, given_type)
    except IndicatorError as exc:
        raise bad_param(name, str(exc)) from exc


class IocSearchHandler(IocListHandler):
    """Exact match on the normalised value; substring match too for domains and URLs. Scope and headers as
    the IOC list's."""

    async def get(self) -> None:
        raw = self.params.text("q")
        if raw is None:
            raise bad_param("q", "is required: the indicator value to find")
        ioc_type, value = _indicator(raw, "q", self.params.text("type", None, IOC_TYPES))
        request = parse_ioc_request(self.params, self.principal.tier, utcnow(), secret=self.ctx.settings.secret_key)
        substring = REGISTRY[ioc_type].substring_search
        if substring:
            types = (ioc_type,) if self.params.has("type") else substring
            query = replace(request.query, types=types, value_contains=value)
        else:
            query = replace(request.query, types=(ioc_type,), values=(value,))
        await write_ioc_list(self, replace(request, query=query))


def lookup_cost(values: int) -> int:
    """Rate-limit units of a bulk lookup: one per ``LOOKUP_VALUES_PER_UNIT`` values, rounded up."""
    return max(math.ceil(values / LOOKUP_VALUES_PER_UNIT), 1)


def bulk_values(body: Any, tier: Tier) -> list[str]:
    """The ``values`` of a bulk lookup's body: a list of 1 to the tier's maximum strings, else a 400."""
    values = body.get("values") if isinstance(body, dict) else None
    if not isinstance(values, list) or not values:
        raise bad_param("values", "is required: a JSON object {\"values\": [...]} with at least one string")
    if not all(isinstance(v, str) for v in values):
        raise bad_param("values", "holds an item that is not a string")
    if len(values) > tier.lookup_values_max:
        raise BadRequest(f"parameter 'values': has {len(values):,} items; the {tier.name} plan looks up at most "
                         f"{tier.lookup_values_max:,} at once",
                         details={"parameter": "values", "max_items": tier.lookup_values_max})
    return values


class LookupHandler(JsonBodyHandler):
    """Indicator enrichment within the caller's window: one value (GET, type auto-detected; unknown values
    answer 200 with found false) or a list of them (POST, each answered in order)."""

    scope = SCOPE_IOCS

    async def get(self) -> None:
        raw = self.params.text("value")
        if raw is None:
            raise bad_param("value", "is required: the indicator to look up")
        ioc_type, value = _indicator(raw, "value", None)
        now, tier = utcnow(), self.principal.tier
        self.set_header("X-Tier-Lookback-Days", str(tier.ioc_lookback_days))
        self.write_json(await lookup(self.ctx.stores, ioc_type, value, lookup_window(tier, now), now))

    async def post(self) -> None:
        tier = self.principal.tier
        values = bulk_values(self.json_body(), tier)
        cost = lookup_cost(len(values))
        if cost > 1:  # one unit was charged with the headers (BaseHandler.prepare)
            await self.charge(self.principal, cost - 1)
        now = utcnow()
        results = await bulk_lookup(self.ctx.stores, values, lookup_window(tier, now), now)
        counts = {outcome: 0 for outcome in ("found", "not_found", "invalid")}
        for result in results:
            counts[result["result"]] += 1
        self.set_header("X-RateLimit-Cost", str(cost))
        self.set_header("X-Tier-Lookback-Days", str(tier.ioc_lookback_days))
        self.write_json({"meta": {"count": len(results), **counts, "cost": cost}, "data": results})


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [(r"/api/v1/iocs/search", IocSearchHandler, {"ctx": ctx}), (r"/api/v1/lookup", LookupHandler, {"ctx": ctx})]


_LOOKUP_FIELDS: dict[str, Any] = {
    "found": {"type": "boolean", "description": "false also for a record outside the tier's IOC lookback"},
    "type": {"type": "string", "enum": list(IOC_TYPES)},
    "value": {"type": "string", "description": "normalised (refanged, lowercased where case is not meaningful)"},
    "stix_id": {"type": "string", "description": STIX_ID_DOC}, "confidence": {"type": "string"},
    "first_seen": {"type": "string", "format": "date-time"}, "last_seen": {"type": "string", "format": "date-time"},
    "reporting_sources": {"type": "array", "items": {"type": "string"}},
    "related_articles": {"type": "array", "items": {"type": "object"}},
    "cves": {"type": "array", "items": {"type": "string"}},
    "mitre_techniques": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "string"}, "name": {"type": "string"}}}},
    **SIGHTING_COUNT_FIELDS,
    "risk": {"type": "object", "description": "The record's `score` (as GET /api/v1/iocs gives it) explained: "
             "its terms' points add up to it, the decay since the last report or a revocation negative.",
             "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 100},
                            "factors": {"type": "array", "items": {"type": "object", "properties": {
                                "factor": {"type": "string"}, "points": {"type": "integer"}}}}}},
    "hunting_queries": {"type": "object", "properties": {
        "splunk_spl": {"type": "string"}, "elastic_kql": {"type": "string"}, "sentinel_kql": {"type": "string"}}},
    "warninglisted": {"type": "boolean", "description": "the value is on a MISP warninglist (known-benign), "
                      "stored or not"},
    "warninglists": {"type": "array", "description": "the warninglists the value is on", "items": {
        "type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "category": {"type": "string", "description": "where the list has one"}}}},
    "note": {"type": "string", "description": "for a value not stored but warninglisted: "
             "`not in our data; on the warninglist <names>`"},
}
_COUNT = {"type": "integer", "minimum": 0}
OPENAPI_SCHEMAS: dict[str, Any] = {
    "Lookup": {"type": "object", "required": ["found", "type", "value"], "properties": _LOOKUP_FIELDS},
    "BulkLookupResult": {"type": "object", "required": ["input", "result"], "properties": {
        "input": {"type": "string", "description": "the value as sent"},
        "result": {"type": "string", "enum": ["found", "not_found", "invalid"]},
        "reason": {"type": "string", "description": "why an `invalid` value is no indicator"},
        **_LOOKUP_FIELDS,
    }},
    "BulkLookup": {"type": "object", "required": ["meta", "data"], "properties": {
        "meta": {"type": "object", "required": ["count", "found", "not_found", "invalid", "cost"], "properties": {
            "count": _COUNT, "found": _COUNT, "not_found": _COUNT, "invalid": _COUNT,
            "cost": {"type": "integer", "minimum": 1, "description": "rate-limit units charged"}}},
        "data": {"type": "array", "items": {"$ref": "#/components/schemas/BulkLookupResult"}},
    }},
}
# Which strings are indicators is decided by store.indicators.detect_type, not by a schema pattern.
_NOT_AN_INDICATOR = "a `{name}` of no recognised indicator type (e.g. `0`): by design, a schema-valid string"
_WINDOW = ("Within the tier's IOC lookback ({days}): a record last added or updated before it answers as a value "
           "never stored, as /iocs/search hides it. Related articles are those inside the tier's article lookback; "
           "technique names come from them, else from the ATT&CK catalogue.").format(
               days=per_tier("ioc_lookback_days", " days"))
_BULK_BODY: dict[str, Any] = {"type": "object", "required": ["values"], "properties": {"values": {
    "type": "array", "minItems": 1, "maxItems": max(t.lookup_values_max for t in TIERS.values()),
    "items": {"type": "string"},
    "description": f"Indicators, defanged forms accepted; at most {per_tier('lookup_values_max')} per request."}}}
_LOOKUP_OK_HEADERS = {"X-Tier-Lookback-Days": WINDOW_HEADERS["X-Tier-Lookback-Days"]}
# What `q` must be once `type` is given, from the registry (store.ioctypes: detect, part).
_PARTS = {"domain": "letters, digits, `-` and `.`", "url": "any text without spaces"}
_TYPED_QUERY = (
    "With `type`, q must be a whole value of that type (e.g. 64 hex digits for sha256, CVE-YYYY-NNNN for cve), "
    "else 400 invalid_parameter naming q; "
    + "; ".join(f"for {name} also part of one ({_PARTS[name]}), matched as a substring" for name in IOC_TYPES
                if REGISTRY[name].part is not None) + ".")
OPENAPI_PATHS: dict[str, Any] = {
    "/api/v1/iocs/search": operation(
        "iocs", "Find an indicator", "Scope read:iocs. Exact match on the normalised value (defanged input such as "
        "evil[.]com is refanged); domains and URLs also match as substrings, case-sensitively, through a trigram index "
        "(a value shorter than 3 characters matches as a prefix). Same shape and lookback as the list.",
        [param("q", {"type": "string"}, "The indicator value: an IP, domain, URL, hash, e-mail or CVE (a value "
               "of no such type, such as `0`: 400 invalid_parameter). " + _TYPED_QUERY, required=True),
         csv_param("type", "Narrow to one IOC type (default: detected from q).", IOC_TYPES),
         limit_param("Page size (tier-capped).", 100),
         OFFSET_PARAM, CURSOR_PARAM, COUNT_STRATEGY_PARAM, INCLUDE_WARNINGLISTED_PARAM],
        {"200": ok("Matches", {"application/json": {"$ref": "#/components/schemas/IocList"}}, WINDOW_HEADERS),
         "400": bad_request(_NOT_AN_INDICATOR.format(name="q") + ", or not of the given `type`", LOOKBACK_HEADER)}),
    "/api/v1/lookup": {**operation(
        "iocs", "Enrich one indicator", "Scope read:iocs. The type is detected; reporting sources, first/last seen, "
        "related articles, CVEs, ATT&CK techniques, an explained 0-100 risk score and hunting queries for Splunk SPL, "
        "Elastic KQL and Microsoft Sentinel KQL. Stored or not, the MISP warninglists the value is on "
        "(`warninglists`). Unknown values: 200 with found false (and, when listed, a `note` naming the lists); "
        "values of no known type: "
        f"400. {_WINDOW}",
        [param("value", {"type": "string"}, "The indicator: an IP, domain, URL, hash, e-mail or CVE, defanged "
               "forms accepted (a value of no such type, such as `0`: 400 invalid_parameter).", required=True)],
        {"200": ok("Enrichment", {"application/json": {"$ref": "#/components/schemas/Lookup"}}, _LOOKUP_OK_HEADERS),
         "400": bad_request(_NOT_AN_INDICATOR.format(name="value"))}), **operation(
        "iocs", "Enrich many indicators", "Scope read:iocs. Up to "
        f"{per_tier('lookup_values_max')} values in one request, answered in order: each carries the value as "
        "sent (`input`) and its `result`: `found` and `not_found` with what GET /api/v1/lookup answers for it, "
        f"`invalid` with the `reason` (no recognised indicator type, or longer than {MAX_VALUE_CHARS:,} characters). "
        f"Defanged forms (hxxp, [.], (dot), [at]) are accepted. {_WINDOW} Cost: one rate-limit unit per "
        f"{LOOKUP_VALUES_PER_UNIT} values, rounded up (1,000 values cost 10), reported in `X-RateLimit-Cost`. "
        f"The body is at most {MAX_BODY_BYTES:,} bytes (above: 413).",
        [], {"200": ok("One result per value, in order", {"application/json": {
            "$ref": "#/components/schemas/BulkLookup"}}, {**_LOOKUP_OK_HEADERS, "X-RateLimit-Cost": header(
                "Rate-limit units this request cost", "integer")}),
             "400": bad_request("a body that is no JSON (`invalid_body`); `values` missing, empty, holding a "
                                "non-string, or longer than the plan allows (`invalid_parameter` naming `values`)"),
             "413": error_response(f"payload_too_large: a body above {MAX_BODY_BYTES:,} bytes")},
        method="post", body=_BULK_BODY)},
}
