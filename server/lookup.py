"""GET /api/v1/iocs/search and GET /api/v1/lookup (spec, IOCs; issue 8)."""

from __future__ import annotations

from dataclasses import asdict, replace
from datetime import timedelta
from typing import Any

from config.tiers import SCOPE_IOCS
from exporters.lookup_risk import hunting_queries, risk_score
from server.base import BaseHandler
from server.context import AppContext
from server.errors import bad_param
from server.ioc_params import parse_ioc_request
from server.iocs import STIX_ID_DOC, WINDOW_HEADERS, write_ioc_list
from server.openapi_parts import bad_request, csv_param, ok, operation, param
from server.params import MAX_INTEGER
from store.base import NotFound
from store.indicators import detect_type, normalize, refang
from store.ioctypes import REGISTRY
from store.records import IOC_TYPES, Article, Ioc, iso, utcnow

RELATED_ARTICLES_MAX = 20


def _indicator(raw: str, name: str, given_type: str | None) -> tuple[str, str]:
    """(type, normalised value) of a user-typed indicator, defanged forms included."""
    text = refang(raw.strip())
    ioc_type = given_type or detect_type(text)
    if ioc_type is None:
        raise bad_param(name, "is not a recognised indicator (IP, domain, URL, hash, e-mail or CVE)")
    try:
        return ioc_type, normalize(ioc_type, text)
    except ValueError as exc:  # issue 15: a value that is not of the requested type is the caller's error
        raise bad_param(name, f"is not a valid {ioc_type} value") from exc


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


def _technique_names(articles: list[Article]) -> dict[str, str]:
    return {t.id: t.name for a in articles for t in a.mitre_techniques}


async def _related(handler: BaseHandler, ioc: Ioc) -> list[Article]:
    """The articles reporting ``ioc`` that the caller may read: inside its tier's article lookback, as
    ``/articles/{id}`` would serve them (issue 15: a Free key saw older titles and URLs here)."""
    floor = utcnow() - timedelta(days=handler.principal.tier.article_lookback_days)
    found = []
    for article_id in ioc.article_ids[-RELATED_ARTICLES_MAX:]:
        try:
            found.append(await handler.ctx.articles.get_article(article_id))
        except NotFound:  # an article removed since is simply not listed
            continue
    return sorted((a for a in found if a.published_at >= floor), key=lambda a: a.published_at, reverse=True)


def _found_payload(ioc: Ioc, articles: list[Article]) -> dict[str, Any]:
    score, factors = risk_score(ioc, utcnow())
    names = _technique_names(articles)
    return {
        "found": True, "type": ioc.type, "value": ioc.value, "stix_id": ioc.stix_id,
        "confidence": ioc.confidence, "first_seen": iso(ioc.first_seen), "last_seen": iso(ioc.last_seen),
        "source": {"feed_name": ioc.feed_name, "category": ioc.source_category},
        "reporting_sources": list(ioc.sources), "industries": list(ioc.industries),
        "related_articles": [{"id": a.id, "title": a.title, "url": a.url, "source_name": a.source_name,
                              "published_at": iso(a.published_at)} for a in articles],
        "cves": list(ioc.cves),
        "mitre_techniques": [{"id": t, "name": names.get(t, "")} for t in ioc.techniques],
        "threat_actors": list(ioc.threat_actors),
        "risk": {"score": score, "factors": [asdict(f) for f in factors]},
        "hunting_queries": hunting_queries(ioc.type, ioc.value),
    }


class LookupHandler(BaseHandler):
    """Single-indicator enrichment: type auto-detected; unknown values answer 200 with found false."""

    scope = SCOPE_IOCS

    async def get(self) -> None:
        raw = self.params.text("value")
        if raw is None:
            raise bad_param("value", "is required: the indicator to look up")
        ioc_type, value = _indicator(raw, "value", None)
        ioc = await self.ctx.iocs.get_ioc(ioc_type, value)
        if ioc is None:
            self.write_json({"found": False, "type": ioc_type, "value": value,
                             "hunting_queries": hunting_queries(ioc_type, value)})
            return
        self.write_json(_found_payload(ioc, await _related(self, ioc)))


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
        "evil[.]com is refanged); domains and URLs also match as substrings. Same shape and lookback as the list.",
        [param("q", {"type": "string"}, "The indicator value: an IP, domain, URL, hash, e-mail or CVE (a value "
               "of no such type, such as `0`, or not of the given `type`: 400 invalid_parameter).", required=True),
         csv_param("type", "Narrow to one IOC type (default: detected from q).", IOC_TYPES),
         param("limit", {"type": "integer", "minimum": 1, "maximum": MAX_INTEGER, "default": 100},
               "Page size (tier-capped)."),
         param("offset", {"type": "integer", "minimum": 0, "maximum": MAX_INTEGER, "default": 0}, "Rows to skip.")],
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
