"""The single-indicator enrichment of GET /api/v1/lookup: an explained risk score and hunting queries.

Queries target the fields each SIEM's own data model uses: Splunk CIM names, Elastic Common Schema,
and Microsoft Sentinel / Defender tables. Values are escaped for each query language, so a hostile
value can never close the string and inject query syntax.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

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


def _splunk(kind: str, v: str) -> str:
    fields = {
        "ip": ["src_ip", "dest_ip", "src", "dest"], "domain": ["query", "dest_host", "url_domain"],
        "url": ["url"], "hash": ["file_hash", "hash"], "email": ["src_user", "sender", "recipient"],
        "cve": ["cve", "signature"], "mitre-attack": ["annotations.mitre_attack", "mitre_technique_id"],
    }[kind]
    return "search index=* (" + " OR ".join(f"{f}={_q(v)}" for f in fields) + ")"


def _elastic(ioc_type: str, kind: str, v: str) -> str:
    fields = {
        "ip": ["source.ip", "destination.ip"], "domain": ["dns.question.name", "url.domain", "destination.domain"],
        "url": ["url.full", "url.original"], "email": ["email.from.address", "email.sender.address"],
        "cve": ["vulnerability.id"], "mitre-attack": ["threat.technique.id", "threat.technique.subtechnique.id"],
        "hash": [f"file.hash.{ioc_type}", f"process.hash.{ioc_type}"],
    }[kind]
    return " or ".join(f"{f}: {_q(v)}" for f in fields)


def _sentinel(ioc_type: str, kind: str, v: str) -> str:
    hash_column = {"md5": "MD5", "sha1": "SHA1", "sha256": "SHA256"}.get(ioc_type)
    queries = {
        "ip": f"union isfuzzy=true (CommonSecurityLog | where SourceIP == {_kql(v)} or DestinationIP == {_kql(v)}), "
              f"(DeviceNetworkEvents | where RemoteIP == {_kql(v)})",
        "domain": f"union isfuzzy=true (DnsEvents | where Name =~ {_kql(v)}), "
                  f"(DeviceNetworkEvents | where RemoteUrl has {_kql(v)})",
        "url": f"DeviceNetworkEvents | where RemoteUrl =~ {_kql(v)}",
        "email": f"EmailEvents | where SenderFromAddress =~ {_kql(v)}",
        "cve": f"DeviceTvmSoftwareVulnerabilities | where CveId =~ {_kql(v)}",
        "mitre-attack": f"SecurityAlert | where Techniques has {_kql(v)}",
        "hash": f"DeviceFileEvents | where {hash_column} =~ {_kql(v)}" if hash_column
        else f"CommonSecurityLog | where FileHash =~ {_kql(v)}",
    }
    return queries[kind]


def _kind(ioc_type: str) -> str:
    if ioc_type in ("ipv4", "ipv6"):
        return "ip"
    if ioc_type in ("md5", "sha1", "sha256", "sha512"):
        return "hash"
    return ioc_type


def hunting_queries(ioc_type: str, value: str) -> dict[str, str]:
    """Ready-to-run queries for Splunk SPL, Elastic KQL and Microsoft Sentinel KQL."""
    kind = _kind(ioc_type)
    return {
        "splunk_spl": _splunk(kind, value),
        "elastic_kql": _elastic(ioc_type, kind, value),
        "sentinel_kql": _sentinel(ioc_type, kind, value),
    }
