"""The single-indicator enrichment of GET /api/v1/lookup: an explained risk score and hunting queries.

Queries target the fields each SIEM's own data model uses: Splunk CIM names, Elastic Common Schema,
and Microsoft Sentinel / Defender tables. Values are escaped for each query language, so a hostile
value can never close the string and inject query syntax.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from store.ioctypes import Hunting, mapping
from store.records import Ioc

CONFIDENCE_POINTS = {"high": 40, "medium": 25, "low": 10}
CATEGORY_POINTS = {"government": 15, "commercial": 10, "community": 5}


@dataclass(frozen=True, slots=True)
class Factor:
    factor: str
    points: int


def risk_score(ioc: Ioc, now: datetime) -> tuple[int, list[Factor]]:
    """0-100: confidence, how many sources report it and of which kind, recency, CVEs and techniques."""
    age_days = (now - ioc.last_seen).total_seconds() / 86400
    factors = [
        Factor(f"confidence {ioc.confidence}", CONFIDENCE_POINTS.get(ioc.confidence, 10)),
        Factor(f"reported by {len(ioc.sources)} source(s)", min(len(ioc.sources), 4) * 5),
        Factor(f"best source category {ioc.source_category}", CATEGORY_POINTS.get(ioc.source_category, 0)),
        Factor(f"last seen {age_days:.0f} day(s) ago", 15 if age_days <= 7 else 8 if age_days <= 30 else 0),
    ]
    if ioc.cves:
        factors.append(Factor(f"tied to {len(ioc.cves)} CVE(s)", min(len(ioc.cves), 2) * 5))
    if ioc.techniques:
        factors.append(Factor(f"tied to {len(ioc.techniques)} ATT&CK technique(s)", 5))
    factors = [f for f in factors if f.points]
    return min(sum(f.points for f in factors), 100), factors


def _q(value: str) -> str:
    """A double-quoted string for Splunk SPL and Elastic KQL (backslash and quote escaped)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _kql(value: str) -> str:
    """A verbatim Kusto string literal: only the quote needs doubling."""
    return '@"' + value.replace('"', '""') + '"'


def hunting_queries(ioc_type: str, value: str) -> dict[str, str]:
    """Ready-to-run queries for Splunk SPL, Elastic KQL and Microsoft Sentinel KQL, on the fields the
    registry names for the type (``store.ioctypes``)."""
    hunt = mapping(ioc_type, "hunting", Hunting)
    return {
        "splunk_spl": "search index=* (" + " OR ".join(f"{f}={_q(value)}" for f in hunt.splunk) + ")",
        "elastic_kql": " or ".join(f"{f}: {_q(value)}" for f in hunt.elastic),
        "sentinel_kql": hunt.sentinel.replace("{v}", _kql(value)),
    }
