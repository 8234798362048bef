"""The tier table (spec, section Limits), the scopes (spec, Authentication 7) and format costs."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

# Spec, Authentication 7. `read:stats` and `read:exports` name the Pro-only endpoints whose scope the
# spec leaves "not shown"; `read:taxii` guards the TAXII server; `feeds` manages saved feeds (reading a
# feed's IOCs, exports or TAXII collection needs the scope of that read, as for the standard ones).
SCOPE_ARTICLES = "read:articles"
SCOPE_ARTICLES_EXPORT = "read:articles:export"
SCOPE_IOCS = "read:iocs"
SCOPE_STIX = "read:stix"
SCOPE_MISP = "read:misp"
SCOPE_EXPORTS = "read:exports"
SCOPE_STATS = "read:stats"
SCOPE_TAXII = "read:taxii"
SCOPE_FEEDS = "feeds"
SCOPE_STREAM = "stream"  # the live feed, GET /api/v1/stream
SCOPE_WEBHOOKS = "webhooks"  # the live feed pushed: /api/v1/webhooks
SCOPE_SIGHTINGS = "sightings"  # reports of seen values and false positives: POST /api/v1/sightings
SCOPES: tuple[str, ...] = (
    SCOPE_ARTICLES,
    SCOPE_ARTICLES_EXPORT,
    SCOPE_IOCS,
    SCOPE_STIX,
    SCOPE_MISP,
    SCOPE_EXPORTS,
    SCOPE_STATS,
    SCOPE_TAXII,
    SCOPE_FEEDS,
    SCOPE_STREAM,
    SCOPE_WEBHOOKS,
    SCOPE_SIGHTINGS,
)


@dataclass(frozen=True, slots=True)
class Tier:
    """One row of the spec's Limits table."""

    name: str
    requests_per_minute: int
    requests_per_day: int
    ioc_results_max: int
    articles_max: int
    articles_export_max: int
    ioc_lookback_days: int
    article_lookback_days: int
    max_keys: int
    article_formats: tuple[str, ...]
    # Values one POST /api/v1/lookup may ask about.
    lookup_values_max: int
    scopes: tuple[str, ...]
    # Saved feeds an account may hold (/api/v1/feeds).
    max_feeds: int = 1
    # Entries an account's allowlist may hold (/api/v1/allowlist).
    max_allowlist: int = 1_000
    # The endpoints the spec's Endpoints table marks "Pro": the tier's own facts, never its name.
    ioc_stats: bool = False
    ioc_exports: bool = False
    taxii: bool = False
    # Live streams one key may hold open at once (GET /api/v1/stream); 0: the tier has no stream.
    max_streams: int = 0
    # Webhooks an account may hold (/api/v1/webhooks); 0: the tier has none (the live feed is Pro).
    max_webhooks: int = 0
    # GET /healthz's backend details (paths, versions: never for an anonymous caller).
    health_details: bool = False


FREE = Tier(
    name="free",
    requests_per_minute=10,
    requests_per_day=1_000,
    ioc_results_max=100,
    articles_max=100,
    articles_export_max=100,
    ioc_lookback_days=1,
    article_lookback_days=7,
    max_keys=3,
    article_formats=("json",),
    lookup_values_max=100,
    # Every plan reports sightings and false positives, within its rate budget.
    scopes=(SCOPE_ARTICLES, SCOPE_IOCS, SCOPE_FEEDS, SCOPE_SIGHTINGS),
    max_feeds=1,
    max_allowlist=100,
)
PRO = Tier(
    name="pro",
    requests_per_minute=1_000,
    requests_per_day=1_000_000,
    ioc_results_max=10_000,
    articles_max=1_000,
    articles_export_max=5_000,
    ioc_lookback_days=365,
    article_lookback_days=365,
    max_keys=50,
    article_formats=("json", "ndjson", "csv"),
    lookup_values_max=1_000,
    scopes=SCOPES,
    max_feeds=50,
    max_allowlist=10_000,
    ioc_stats=True,
    ioc_exports=True,
    taxii=True,
    max_streams=5,
    max_webhooks=10,
    health_details=True,
)
# Read-only for the service; the tests swap a row of the table underneath (one table, seen everywhere).
_TABLE: dict[str, Tier] = {FREE.name: FREE, PRO.name: PRO}
TIERS: MappingProxyType[str, Tier] = MappingProxyType(_TABLE)

# Spec, Limits 6 leaves the values "not shown". A streamed export moves up to 50 times the rows of a
# JSON page, so it costs more of the per-minute budget; every bulk IOC export (exporters.registry lists
# them) likewise costs IOC_EXPORT_COST.
ARTICLE_FORMAT_COSTS: MappingProxyType[str, int] = MappingProxyType({"json": 1, "ndjson": 5, "csv": 5})
IOC_EXPORT_COST = 5
# A bulk lookup (POST /api/v1/lookup) costs one unit per this many values, rounded up: 100 values cost
# what one GET /lookup costs, 1,000 values ten, against the hundred a value at a time would cost.
# A list of sightings (POST /api/v1/sightings) is charged by the same rule, per report.
LOOKUP_VALUES_PER_UNIT = 100
# A plain list of values (blocklist, DNS RPZ zone) is a fraction of a rich document's bytes per IOC: it
# costs less, so a resolver or firewall polling every few minutes fits in the budget.
LIST_EXPORT_COST = 2
