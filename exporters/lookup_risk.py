"""The single-indicator enrichment of GET /api/v1/lookup: an explained risk score and hunting queries.

Queries target the fields each SIEM's own data model uses: Splunk CIM names, Elastic Common Schema,
and Microsoft Sentinel / Defender tables. Values are escaped for each query language, so a hostile
value can never close the string and inject query syntax.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from store import decay
from store.ioctypes import Hunting, mapping
from store.records import Ioc


@dataclass(frozen=True, slots=True)
class Factor:
    factor: str
    points: int


def risk_score(ioc: Ioc, now: datetime) -> tuple[int, list[Factor]]:
    """The record's score at ``now`` (store.decay: the same number as its ``score`` everywhere) with the
    terms that make it up: confidence and source kind, corroboration, sightings, then the decay since the
    last report (or the revocation); the points add up to the score."""
    score, factors = decay.explain(ioc, decay.clock(now))
    return score, [Factor(what, points) for what, points in factors]


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
