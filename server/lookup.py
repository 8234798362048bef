"""GET /api/v1/iocs/search and GET /api/v1/lookup (spec, IOCs)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from config.tiers import SCOPE_IOCS
from exporters.lookup import IndicatorError, lookup, read_indicator
from server.base import BaseHandler
from server.context import AppContext
from server.errors import bad_param
from server.ioc_params import COUNT_STRATEGY_PARAM, parse_ioc_request
from server.iocs import STIX_ID_DOC, WINDOW_HEADERS, write_ioc_list
from server.openapi_parts import bad_request, csv_param, ok, operation, param
from server.params import MAX_INTEGER
from store.ioctypes import REGISTRY
from store.records import IOC_TYPES, utcnow


def _indicator(raw: str, name: str, given_type: str | None) -> tuple[str, str]:
    try:
        return read_indicator(raw, given_type)
    except IndicatorError as exc:
        raise bad_param(name, str(exc)) from exc


class IocSearchHandler(BaseHandler):
    """Exact match on the normalised value; substring match too for domains and URLs."""

    scope = SCOPE_IOCS

    async def get(self) -> None:
        raw = self.params.text("q")
        if raw is None:
            raise bad_param("q", "is required: the indicator value to find")
        ioc_type, value = _indicator(raw, "q", self.params.text("type", None, IOC_TYPES))
        request = parse_ioc_request(self.params, self.principal.tier, utcnow(), types=IOC_TYPES)
        substring = REGISTRY[ioc_type].substring_search
        if substring:
            types = (ioc_type,) if self.params.has("type") else substring
            query = replace(request.query, types=types, value_contains=value)
        else:
            query = replace(request.query, types=(ioc_type,), values=(value,))
        await write_ioc_list(self, replace(request, query=query))


class LookupHandler(BaseHandler):
    """Single-indicator enrichment: type auto-detected; unknown values answer 200 with found false."""

    scope = SCOPE_IOCS

    async def get(self) -> None:
        raw = self.params.text("value")
        if raw is None:
            raise bad_param("value", "is required: the indicator to look up")
        ioc_type, value = _indicator(raw, "value", None)
        self.write_json(await lookup(self.ctx.stores, ioc_type, value, self.principal.tier.article_lookback_days,
                                     utcnow()))


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [(r"/api/v1/iocs/search", IocSearchHandler, {"ctx": ctx}), (r"/api/v1/lookup", LookupHandler, {"ctx": ctx})]


OPENAPI_SCHEMAS: dict[str, Any] = {
    "Lookup": {"type": "object", "required": ["found", "type", "value"], "properties": {
        "found": {"type": "boolean"}, "type": {"type": "string", "enum": list(IOC_TYPES)},
        "value": {"type": "string", "description": "normalised (refanged, lowercased where case is not meaningful)"},
        "stix_id": {"type": "string", "description": STIX_ID_DOC}, "confidence": {"type": "string"},
        "first_seen": {"type": "string", "format": "date-time"}, "last_seen": {"type": "string", "format": "date-time"},
        "reporting_sources": {"type": "array", "items": {"type": "string"}},
        "related_articles": {"type": "array", "items": {"type": "object"}},
        "cves": {"type": "array", "items": {"type": "string"}},
        "mitre_techniques": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "string"}, "name": {"type": "string"}}}},
        "risk": {"type": "object", "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 100},
                                                  "factors": {"type": "array", "items": {"type": "object"}}}},
        "hunting_queries": {"type": "object", "properties": {
            "splunk_spl": {"type": "string"}, "elastic_kql": {"type": "string"}, "sentinel_kql": {"type": "string"}}},
    }},
}
# Which strings are indicators is decided by store.indicators.detect_type, not by a schema pattern.
_NOT_AN_INDICATOR = "a `{name}` of no recognised indicator type (e.g. `0`): by design, a schema-valid string"
OPENAPI_PATHS: dict[str, Any] = {
    "/api/v1/iocs/search": operation(
        "iocs", "Find an indicator", "Scope read:iocs. Exact match on the normalised value (defanged input such as "
        "evil[.]com is refanged); domains and URLs also match as substrings, case-sensitively, through a trigram index "
        "(a value shorter than 3 characters matches as a prefix). Same shape and lookback as the list.",
        [param("q", {"type": "string"}, "The indicator value: an IP, domain, URL, hash, e-mail or CVE (a value "
               "of no such type, such as `0`, or not of the given `type`: 400 invalid_parameter).", required=True),
         csv_param("type", "Narrow to one IOC type (default: detected from q).", IOC_TYPES),
         param("limit", {"type": "integer", "minimum": 1, "maximum": MAX_INTEGER, "default": 100},
               "Page size (tier-capped)."),
         param("offset", {"type": "integer", "minimum": 0, "maximum": MAX_INTEGER, "default": 0}, "Rows to skip."),
         COUNT_STRATEGY_PARAM],
        {"200": ok("Matches", {"application/json": {"$ref": "#/components/schemas/IocList"}}, WINDOW_HEADERS),
         "400": bad_request(_NOT_AN_INDICATOR.format(name="q"))}),
    "/api/v1/lookup": operation(
        "iocs", "Enrich one indicator", "Scope read:iocs. The type is detected; reporting sources, first/last seen, "
        "related articles, CVEs, ATT&CK techniques, an explained 0-100 risk score and hunting queries for Splunk SPL, "
        "Elastic KQL and Microsoft Sentinel KQL. Unknown values: 200 with found false; values of no known type: 400. "
        "Looks at the whole history (a single value, not a list), not the tier's list lookback; related articles "
        "are those inside the tier's article lookback.",
        [param("value", {"type": "string"}, "The indicator: an IP, domain, URL, hash, e-mail or CVE, defanged "
               "forms accepted (a value of no such type, such as `0`: 400 invalid_parameter).", required=True)],
        {"200": ok("Enrichment", {"application/json": {"$ref": "#/components/schemas/Lookup"}}),
         "400": bad_request(_NOT_AN_INDICATOR.format(name="value"))}),
}
