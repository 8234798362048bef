"""The IOC exports: STIX 2.1, MISP, CEF, OpenIOC, Sigma (spec, IOCs), and the formats network tools and
SIEMs ingest as they are: a blocklist, a DNS RPZ zone, Suricata rules, ECS documents.

Each answers from the cache when the entry for (format, tier, window, parameters, data version) is
current, else builds it once under the lock; Pro only, each with its scope.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from config.tiers import Tier
from exporters import precompute
from exporters.build_once import Entry
from exporters.registry import EXPORTERS
from server.base import BaseHandler, lookback_and_cost
from server.cached_responses import write_entry
from server.context import AppContext
from server.errors import BadRequest
from server.ioc_params import IOC_FILTER_PARAMS, parse_ioc_request
from server.openapi_parts import (
    COST_HEADER,
    LOOKBACK_HEADER,
    bad_request,
    header,
    limit_param,
    ok,
    operation,
    param,
    per_tier,
)
from server.params import Params
from store.exclusions import account_exclusions
from store.ioctypes import POLICIES, specs
from store.query import IocFilters
from store.records import utcnow


def export_allowed(tier: Tier, fmt: str) -> bool:
    """Whether ``tier`` has the plan and the scope for ``fmt`` (a key may narrow the scopes further)."""
    return tier.ioc_exports and EXPORTERS[fmt].scope in tier.scopes


def export_request(params: Params, tier: Tier, fmt: str,
                   saved: IocFilters | None = None) -> tuple[precompute.ExportRequest, dict[str, str]]:
    """The export ``params`` ask for (with a saved feed's filters in place of the IOC list's, when given),
    clamped to ``tier``, and its window headers (the API and the web's download buttons parse alike)."""
    default_limit = tier.ioc_results_max if fmt == "misp" else precompute.DEFAULT_EXPORT_LIMIT
    parsed = parse_ioc_request(params, tier, utcnow(), default_limit, filters=saved)
    window = params.text("window", None, precompute.known_windows())
    asked_since = params.has("since") or params.has("modified_since")
    if window and asked_since:
        raise BadRequest("give either 'window' or 'since', not both", code="conflicting_parameters",
                         details={"parameters": ["window", "since"]})
    if window and window not in precompute.tier_windows(tier):
        raise BadRequest(f"window {window} exceeds the {tier.name} lookback", details={"parameter": "window"})
    q = parsed.query
    # A since clamped to the lookback asks for the whole lookback: the default window, cached as one entry.
    explicit = asked_since and not parsed.window.clamped
    since = q.since if explicit else None
    if saved is not None:
        return precompute.feed_export(fmt, tier, saved, window, q.limit, since), parsed.headers
    request = precompute.ExportRequest(fmt, tier.name, None if explicit else (window or precompute.default_window(
        tier.name)), since=since, filters=parsed.filters, limit=q.limit)
    return request, parsed.headers


async def build_export(ctx: AppContext, request: precompute.ExportRequest) -> tuple[Entry, str]:
    """The export from the cache, or built once now; with its cache status (hit, miss, bypass)."""
    settings = ctx.settings
    return await precompute.cached_export(ctx.stores, ctx.cache, request, utcnow(), ttl=settings.cache_ttl_seconds,
                                          on_demand_ttl=settings.on_demand_ttl_seconds,
                                          delay=settings.build_delay_ms / 1000)


class ExportFormatHandler(BaseHandler):
    """The gates of one export format (``fmt`` from the URL spec): its scope, the Pro plan, its cost."""

    basic_auth = True  # SIEM and firewall feed pollers are configured with a user name and a password

    def initialize(self, ctx: AppContext, fmt: str = "stix") -> None:
        super().initialize(ctx)
        self.fmt = fmt

    def format_id(self) -> str:
        return self.fmt

    def required_scope(self) -> str | None:
        return EXPORTERS[self.fmt].scope

    def plan_allows(self, tier: Tier) -> bool:
        return tier.ioc_exports

    def tier_headers(self, tier: Tier) -> dict[str, str]:
        return lookback_and_cost(tier.ioc_lookback_days, self.fmt)


class ExportHandler(ExportFormatHandler):
    """GET /api/v1/iocs/{format}: the IOC list's filters and limits, plus ``window``."""

    async def get(self) -> None:
        await answer_export(self, *export_request(self.params, self.principal.tier, self.fmt))


async def answer_export(handler: BaseHandler, request: precompute.ExportRequest, headers: dict[str, str]) -> None:
    """A valid export request's answer: the rest of its cost charged, its headers, then the entry (or 304)."""
    await handler.charge_format()
    for name, value in headers.items():
        handler.set_header(name, value)
    # The caller's account leaves out its allowlisted values and its false positives: its own build, under a
    # key naming them.
    exclusions = await account_exclusions(handler.ctx.stores, handler.principal.user.id)
    entry, status = await build_export(handler.ctx, replace(request, exclusions=exclusions))
    await write_entry(handler, entry, status, attachment=True, fmt=request.format)


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [(rf"/api/v1/iocs/{fmt}", ExportHandler, {"ctx": ctx, "fmt": fmt}) for fmt in EXPORTERS]


WINDOW_PARAMS = [
    param("window", {"type": "string", "enum": list(precompute.known_windows())},
          "Named window: its days before now, to the second (default: the tier's whole lookback). Exclusive with "
          "`since` (both: 400 conflicting_parameters); longer than the tier's lookback: 400. "
          "Named windows without filters, at the default or maximum limit, are precomputed by the workers."),
    limit_param(f"Maximum IOCs (MISP: attributes). Default {precompute.DEFAULT_EXPORT_LIMIT:,} (MISP: the tier cap, "
          f"{per_tier('ioc_results_max')}); capped to the tier with X-Limit-Capped."),
]
_PARAMS = [*IOC_FILTER_PARAMS, *WINDOW_PARAMS]
_HEADERS = {
    "ETag": header("Strong validator of the document; send it back in If-None-Match"),
    "Last-Modified": header("When the document was built"),
    "X-Cache": header("hit (served from the cache), miss (built now), bypass (cache down, built directly)"),
    "Content-Disposition": header("attachment with a dated file name"),
    **LOOKBACK_HEADER,
    **COST_HEADER,
}


# JSON documents are described by their outer shape (STIX 2.1 section 8 bundle; the spec's MISP event);
# the text formats are strings of their media type.
_BODY: dict[str, dict[str, Any]] = {
    "stix": {"type": "object", "required": ["type", "id", "objects"], "properties": {
        "type": {"type": "string", "enum": ["bundle"]}, "id": {"type": "string"},
        "objects": {"type": "array", "items": {"type": "object", "required": ["type", "id"]}}}},
    "misp": {"type": "object", "required": ["Event"], "properties": {"Event": {
        "type": "object", "required": ["uuid", "info", "threat_level_id", "analysis", "distribution", "Attribute"],
        "properties": {"uuid": {"type": "string"}, "info": {"type": "string"},
                       "threat_level_id": {"type": "string"}, "analysis": {"type": "string"},
                       "distribution": {"type": "string"},
                       "Attribute": {"type": "array", "items": {"type": "object", "required": [
                           "type", "category", "value", "to_ids"]}}}}}},
    # No type: the body is YAML text, and a client that parses it sees the first rule's mapping.
    "sigma": {"description": "A multi-document YAML stream: one Sigma rule per document, the documents "
              "separated by `---` lines (read it with a multi-document loader, e.g. yaml.safe_load_all)."},
    "blocklist": {"type": "string", "description": "One value per line, sorted, in a section per IOC type; lines "
                  "starting with `#` are comments: the generation time, window and filters, then each type's "
                  "count. Ask for one type with `type` (e.g. `type=ipv4,ipv6` for a firewall, `type=domain` "
                  "for a resolver)."},
    "rpz": {"type": "string", "description": "A DNS zone file (RFC 1035 master file, RFC 4027 media type) for a "
            "Response Policy Zone: `$TTL`, SOA and NS at the apex, then `name CNAME .` and `*.name CNAME .` "
            "(NXDOMAIN) per reported domain. Owner names are relative: load it as a primary zone of any name. "
            "The SOA serial is the newest of the build hour and the domains' last change, in seconds since the "
            "epoch, so it grows whenever the zone changes."},
    "suricata": {"type": "string", "description": "Suricata rules, one per line, under `#` comments: `ip` rules "
                 "for addresses, `dns.query`, `tls.sni` and `http.host` rules for domains (and their "
                 "subdomains), `http.host` plus `http.uri` for URLs. `classtype:bad-unknown`; `metadata` carries "
                 "the confidence and source (feed). Each rule's `sid` is derived from its buffer and value, in "
                 "1,000,000,000-1,999,999,999, so it is the same in every build."},
    "ecs": {"type": "string", "description": "NDJSON: one Elastic Common Schema document per line, "
            "`event.kind: enrichment`, `event.category: [threat]`, `event.type: [indicator]`, the value in "
            "`threat.indicator.*` by type (`ip`, `url.domain`, `url.full`, `file.hash.*`, `email.address`), "
            "`threat.feed.*` naming the feed and what was left out. `event.id` (the STIX indicator id) is stable: "
            "use it as the document `_id`."},
}


# Where a ``skip`` format says which records it left out and why (store.ioctypes.POLICIES).
_SKIP_NOTES: dict[str, str] = {
    "openioc": "the metadata description says", "sigma": "`#` comment lines at the top say",
    "blocklist": "`#` comment lines at the top say", "rpz": "`;` comment lines at the top say",
    "suricata": "`#` comment lines at the top say", "ecs": "each document's `threat.feed.description` says"}


def _skipped(fmt: str) -> str:
    labels = [spec.label for spec in specs() if spec.reason_for(fmt)]
    if POLICIES.get(fmt) != "skip" or not labels:
        return ""
    return (f" Records this format has no place for ({', '.join(labels)}) are left out; {_SKIP_NOTES[fmt]} how "
            "many and why.")


def export_operation(fmt: str, lead: str, parameters: list[dict[str, Any]],
                     extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The OpenAPI operation of ``fmt``'s export (also a saved feed's): ``lead`` opens its description."""
    exporter = EXPORTERS[fmt]
    scope, media, summary = exporter.scope, exporter.media_type, exporter.summary
    media_type = media.split(";")[0] if fmt != "stix" else media
    return operation("exports", f"{lead} as {summary} (Pro)",
                     f"Pro plan, scope {scope}. Costs {exporter.cost} requests of the rate limit "
                     f"(`X-Format-Cost-Multiplier: {exporter.cost}`). An empty result is a valid empty "
                     f"document.{_skipped(fmt)}" + (f" {exporter.notes}" if exporter.notes else ""), parameters,
                     {"200": ok(summary, {media_type: _BODY.get(fmt, {"type": "string"})}, _HEADERS),
                      "304": {"description": "Not modified (If-None-Match matched the ETag)"},
                      "400": bad_request("conflicting_parameters (`window` with `since`)",
                                         {**LOOKBACK_HEADER, **COST_HEADER}), **(extra or {})}, basic=True)


OPENAPI_PATHS: dict[str, Any] = {f"/api/v1/iocs/{fmt}": export_operation(fmt, "Export IOCs", _PARAMS)
                                 for fmt in EXPORTERS}
