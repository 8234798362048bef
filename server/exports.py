"""The IOC exports: STIX 2.1, MISP, CEF, OpenIOC, Sigma (spec, IOCs).

Each answers from the cache when the entry for (format, tier, window, parameters, data version) is
current, else builds it once under the lock; Pro only, each with its scope.
"""

from __future__ import annotations

from typing import Any

from config.tiers import Tier
from exporters import precompute
from exporters.build_once import Entry
from exporters.registry import EXPORTERS, format_cost
from server.base import BaseHandler
from server.cached_responses import write_entry
from server.context import AppContext
from server.errors import BadRequest
from server.ioc_params import IOC_FILTER_PARAMS, parse_ioc_request
from server.openapi_parts import bad_request, header, ok, operation, param, per_tier
from server.params import MAX_INTEGER, Params
from store.ioctypes import POLICIES, specs
from store.records import utcnow


def export_allowed(tier: Tier, fmt: str) -> bool:
    """Whether ``tier`` has the plan and the scope for ``fmt`` (a key may narrow the scopes further)."""
    return tier.ioc_exports and EXPORTERS[fmt].scope in tier.scopes


def export_request(params: Params, tier: Tier, fmt: str) -> tuple[precompute.ExportRequest, dict[str, str]]:
    """The export ``params`` ask for, clamped to ``tier``, and its window headers (the API and the web's
    download buttons parse alike)."""
    default_limit = tier.ioc_results_max if fmt == "misp" else precompute.DEFAULT_EXPORT_LIMIT
    parsed = parse_ioc_request(params, tier, utcnow(), default_limit)
    window = params.text("window", None, precompute.known_windows())
    if window and params.has("since"):
        raise BadRequest("give either 'window' or 'since', not both", code="conflicting_parameters",
                         details={"parameters": ["window", "since"]})
    if window and window not in precompute.tier_windows(tier):
        raise BadRequest(f"window {window} exceeds the {tier.name} lookback", details={"parameter": "window"})
    q = parsed.query
    explicit = params.has("since")
    request = precompute.ExportRequest(
        fmt, tier.name, None if explicit else (window or precompute.default_window(tier.name)),
        since=q.since if explicit else None, types=q.types, confidences=q.confidences,
        categories=q.categories, industries=q.industries, limit=q.limit)
    return request, parsed.headers


async def build_export(ctx: AppContext, request: precompute.ExportRequest) -> tuple[Entry, str]:
    """The export from the cache, or built once now; with its cache status (hit, miss, bypass)."""
    settings = ctx.settings
    return await precompute.cached_export(ctx.stores, ctx.cache, request, utcnow(), ttl=settings.cache_ttl_seconds,
                                          on_demand_ttl=settings.on_demand_ttl_seconds,
                                          delay=settings.build_delay_ms / 1000)


class ExportHandler(BaseHandler):
    """GET /api/v1/iocs/{format}: the IOC list's filters and limits, plus ``window``."""

    def initialize(self, ctx: AppContext, fmt: str = "stix") -> None:
        super().initialize(ctx)
        self.fmt = fmt

    def format_id(self) -> str:
        return self.fmt

    def required_scope(self) -> str | None:
        return EXPORTERS[self.fmt].scope

    def plan_allows(self, tier: Tier) -> bool:
        return tier.ioc_exports

    async def get(self) -> None:
        request, headers = export_request(self.params, self.principal.tier, self.fmt)
        await self.charge_format()
        for name, value in headers.items():
            self.set_header(name, value)
        self.set_header("X-Format-Cost-Multiplier", str(format_cost(self.fmt)))
        entry, status = await build_export(self.ctx, request)
        await write_entry(self, entry, status, attachment=True, fmt=self.fmt)


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [(rf"/api/v1/iocs/{fmt}", ExportHandler, {"ctx": ctx, "fmt": fmt}) for fmt in EXPORTERS]


_PARAMS = [
    *IOC_FILTER_PARAMS,
    param("window", {"type": "string", "enum": list(precompute.known_windows())},
          "Named window ending at the current hour (default: the tier's whole lookback). Exclusive with `since` "
          "(both: 400 conflicting_parameters); longer than the tier's lookback: 400. "
          "Named windows without filters, at the default or maximum limit, are precomputed by the workers."),
    param("limit", {"type": "integer", "minimum": 1, "maximum": MAX_INTEGER},
          f"Maximum IOCs (MISP: attributes). Default {precompute.DEFAULT_EXPORT_LIMIT:,} (MISP: the tier cap, "
          f"{per_tier('ioc_results_max')}); capped to the tier with X-Limit-Capped."),
]
_HEADERS = {
    "ETag": header("Strong validator of the document; send it back in If-None-Match"),
    "Last-Modified": header("When the document was built"),
    "X-Cache": header("hit (served from the cache), miss (built now), bypass (cache down, built directly)"),
    "Content-Disposition": header("attachment with a dated file name"),
    "X-Format-Cost-Multiplier": header("Rate-limit cost of the request", "integer"),
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
}


# Where a ``skip`` format says which records it left out and why (store.ioctypes.POLICIES).
_SKIP_NOTES: dict[str, str] = {"openioc": "the metadata description says", "sigma": "`#` comment lines at the top say"}


def _skipped(fmt: str) -> str:
    labels = [spec.label for spec in specs() if spec.reason_for(fmt)]
    if POLICIES.get(fmt) != "skip" or not labels:
        return ""
    return (f" Records this format has no place for ({', '.join(labels)}) are left out; {_SKIP_NOTES[fmt]} how "
            "many and why.")


def _doc(fmt: str) -> dict[str, Any]:
    exporter = EXPORTERS[fmt]
    scope, media, summary = exporter.scope, exporter.media_type, exporter.summary
    media_type = media.split(";")[0] if fmt != "stix" else media
    return operation("exports", f"Export IOCs as {summary} (Pro)",
                     f"Pro plan, scope {scope}. An empty result is a valid empty document.{_skipped(fmt)}"
                     + (f" {exporter.notes}" if exporter.notes else ""), _PARAMS,
                     {"200": ok(summary, {media_type: _BODY.get(fmt, {"type": "string"})}, _HEADERS),
                      "304": {"description": "Not modified (If-None-Match matched the ETag)"},
                      "400": bad_request("conflicting_parameters (`window` with `since`)")})


OPENAPI_PATHS: dict[str, Any] = {f"/api/v1/iocs/{fmt}": _doc(fmt) for fmt in EXPORTERS}
