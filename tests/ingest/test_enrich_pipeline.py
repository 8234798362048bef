"""enrich() and enrich_file(): every field, the CLI shape, HTML and text files, classification."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ingest.enrich import CLI_IOC_TYPES, enrich, enrich_file
from store.records import CATEGORIES, INDUSTRY_TAGS, SEVERITY_LABELS, severity_label

ARTICLE = """The operators exploited CVE-2025-0001, an unauthenticated remote code execution flaw in hospital VPN
appliances with a CVSS score of 9.8, and the flaw is actively exploited. Volt Typhoon used password spraying first.
The backdoor beacons to its C2 server at 185.225.73[.]18 and to hxxps://sync-cdn[.]top/gate.

Indicators of compromise
SHA256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
"""


def test_enrich_fills_every_field() -> None:
    now = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
    result = enrich("Hospitals hit through VPN zero-day", ARTICLE, source_name="Test", now=now)
    assert {(ioc.type, ioc.value) for ioc in result.iocs} == {
        ("ipv4", "185.225.73.18"), ("url", "https://sync-cdn.top/gate"), ("domain", "sync-cdn.top"),
        ("sha256", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")}
    assert all(ioc.confidence in ("high", "medium", "low") for ioc in result.iocs)
    assert result.cve_ids == ["CVE-2025-0001"]
    # spraying named as such; exploiting the VPN appliance's flaw told in prose (the classifier)
    assert [t.id for t in result.mitre_techniques] == ["T1110.003", "T1190"]
    assert result.threat_actors == ["volt typhoon"]
    assert result.category in CATEGORIES and result.category == "vulnerabilities"
    assert result.severity_score >= 9.0 and "exploited in the wild" in result.severity_reasons
    assert "healthcare" in result.industry_tags and set(result.industry_tags) <= set(INDUSTRY_TAGS)
    assert result.summary and result.ai_summary and "C2" in result.ai_summary + result.summary
    assert all(tag.startswith("#") for tag in result.tags) and "#vulnerabilities" in result.tags
    assert result.categorized_at == datetime(2025, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)
    assert result.categorized_by == "rules" and 0 < result.ai_classification_confidence <= 1
    assert ("cve", "CVE-2025-0001") in {(ioc.type, ioc.value) for ioc in result.all_iocs()}


def test_to_cli_is_the_issue_shape() -> None:
    shape = enrich("t", ARTICLE).to_cli()
    assert list(shape) == ["iocs", "cves", "attack_techniques", "threat_actors", "category", "severity_label",
                           "severity_score"]
    assert list(shape["iocs"]) == list(CLI_IOC_TYPES)
    assert shape["severity_label"] in SEVERITY_LABELS
    assert shape["severity_label"] == severity_label(shape["severity_score"])
    json.dumps(shape)  # plain JSON types only


def test_article_without_indicators_or_entities() -> None:
    result = enrich("How to plan a tabletop exercise", "A tabletop exercise walks the incident response team "
                    "through a scenario. Start with a simple plan and a facilitator, then review lessons learned.")
    assert result.iocs == [] and result.cve_ids == [] and result.threat_actors == []
    assert result.content_type == "educational" and result.category == "incident-response"
    assert result.severity_score <= 3.9 and result.industry_tags == ["unclassified"]


def test_text_file_first_line_is_the_title(tmp_path: Path) -> None:
    path = tmp_path / "story-one.txt"
    path.write_text("Zero-day CVE-2024-3400 exploited\nAttackers exploit the flaw and beacon to C2 45.9.9.9.\n")
    stem, result = enrich_file(path)
    assert stem == "story-one" and result.cve_ids == ["CVE-2024-3400"]
    assert [ioc.value for ioc in result.iocs] == ["45.9.9.9"]


def test_html_file_is_reduced_to_text_with_its_indicator_table(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text("<html><head><title>Loader report</title><script>var x='evil-script.com';</script></head><body>"
                    "<nav>home.example-news.com</nav><h2>Indicators of compromise</h2><table>"
                    "<tr><th>Type</th><th>Value</th></tr><tr><td>Domain</td><td>loader-cdn[.]net</td></tr>"
                    "<tr><td>JA3</td><td>72a589da586844d7f0818ce684948eea</td></tr></table></body></html>")
    stem, result = enrich_file(path)
    assert stem == "page"
    assert [(ioc.type, ioc.value, ioc.confidence) for ioc in result.iocs] == [("domain", "loader-cdn.net", "high")]


def test_html_argument_is_used_when_text_is_empty() -> None:
    result = enrich("", "", html="<html><body><p>The implant beacons to its C2 at 91.92.251.103 nightly.</p>"
                                 "</body></html>")
    assert [ioc.value for ioc in result.iocs] == ["91.92.251.103"]


@pytest.mark.parametrize("title, text, category", [
    ("New ransomware strain encrypts ESXi hosts", "The malware variant drops a loader and a backdoor; the sample "
     "uses obfuscation and persistence.", "malware"),
    ("Regulators fine bank under GDPR", "The regulator imposed a fine for compliance failures and audit gaps under "
     "the new legislation.", "compliance"),
    ("Prompt injection hits LLM agents", "Large language models and AI agents can be jailbroken by prompt injection "
     "hidden in documents.", "ai-ml-security"),
    ("PLC flaw lets attackers stop pumps", "SCADA and ICS operators should isolate PLCs and HMIs; the industrial "
     "control firmware is affected.", "iot-ot"),
    ("Hospital confirms data breach after cyberattack", "The breach exposed personal data; the hospital took systems "
     "offline and is notifying patients.", "attacks-breaches"),
])
def test_category_by_topic(title: str, text: str, category: str) -> None:
    assert enrich(title, text).category == category
