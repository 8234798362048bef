"""Every registered IOC type in every format: the exact per-type fact appears in the output, and the output
passes the format's own validator (tests/exporters/conftest.py).

The expected facts are pinned here, not read from the registry, so a wrong fact there (an IPv6 record
given an ``ipv4-addr`` pattern) fails; the table must have a row for every registered type.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
from sigma.collection import SigmaCollection

from exporters.base import ExportContext
from exporters.cef import CefExporter
from exporters.lookup_risk import hunting_queries
from exporters.misp import MispExporter
from exporters.openioc import OpenIocExporter
from exporters.sigma import SigmaExporter
from exporters.stix import StixExporter
from store.ioctypes import REGISTRY
from taxii.collections import COLLECTIONS
from tests.exporters.conftest import make_ioc

NS = "{http://openioc.org/schemas/OpenIOC_1.1}"
TYPED_CEF_KEYS = {"dst", "c6a1", "dhost", "request", "fileHash", "suser"}


class Row(NamedTuple):
    stix: str  # the pattern's object path, or the STIX object type when there is no pattern
    misp: tuple[str, str, bool]  # attribute type, category, to_ids
    cef: tuple[str, str | None]  # event name, the dictionary key that carries the value (None: cs1 only)
    openioc: str | None  # search term (None: left out, counted)
    sigma: tuple[str, str] | None  # log source category, detection field (None: left out, counted)
    hunting: tuple[str, str, str]  # a Splunk field, an Elastic field, a Sentinel table
    taxii: str | None  # its collection besides all-iocs


_IP_HUNT = ("dest_ip", "destination.ip", "DeviceNetworkEvents")
TABLE: dict[str, Row] = {
    "ipv4": Row("ipv4-addr:value", ("ip-src", "Network activity", True), ("Malicious IPv4 address", "dst"),
                "PortItem/remoteIP", ("network_connection", "DestinationIp"), _IP_HUNT, "ip-addresses"),
    "ipv6": Row("ipv6-addr:value", ("ip-src", "Network activity", True), ("Malicious IPv6 address", "c6a1"),
                "PortItem/remoteIP", ("network_connection", "DestinationIp"), _IP_HUNT, "ip-addresses"),
    "domain": Row("domain-name:value", ("domain", "Network activity", True), ("Malicious domain", "dhost"),
                  "Network/DNS", ("dns_query", "QueryName"), ("query", "dns.question.name", "DnsEvents"), "domains"),
    "url": Row("url:value", ("url", "Network activity", True), ("Malicious URL", "request"), "UrlHistoryItem/URL",
               ("proxy", "c-uri"), ("url", "url.full", "DeviceNetworkEvents"), "urls"),
    "md5": Row("file:hashes.MD5", ("md5", "Payload delivery", True), ("Malicious file MD5", "fileHash"),
               "FileItem/Md5sum", ("process_creation", "Hashes"), ("file_hash", "file.hash.md5", "DeviceFileEvents"),
               "file-hashes"),
    "sha1": Row("file:hashes.'SHA-1'", ("sha1", "Payload delivery", True), ("Malicious file SHA-1", "fileHash"),
                "FileItem/Sha1sum", ("process_creation", "Hashes"),
                ("file_hash", "file.hash.sha1", "DeviceFileEvents"), "file-hashes"),
    "sha256": Row("file:hashes.'SHA-256'", ("sha256", "Payload delivery", True),
                  ("Malicious file SHA-256", "fileHash"), "FileItem/Sha256sum", ("process_creation", "Hashes"),
                  ("file_hash", "file.hash.sha256", "DeviceFileEvents"), "file-hashes"),
    "sha512": Row("file:hashes.'SHA-512'", ("sha512", "Payload delivery", True),
                  ("Malicious file SHA-512", "fileHash"), None, None,
                  ("file_hash", "file.hash.sha512", "CommonSecurityLog"), "file-hashes"),
    "email": Row("email-addr:value", ("email-src", "Payload delivery", False), ("Malicious sender address", "suser"),
                 "Email/From", None, ("sender", "email.from.address", "EmailEvents"), None),
    "cve": Row("vulnerability", ("vulnerability", "External analysis", False), ("Exploited vulnerability", None),
               None, None, ("cve", "vulnerability.id", "DeviceTvmSoftwareVulnerabilities"), "cves"),
    "mitre-attack": Row("attack-pattern", ("text", "External analysis", False), ("Reported ATT&CK technique", None),
                        None, None, ("mitre_technique_id", "threat.technique.id", "SecurityAlert"), "attack-patterns"),
}
TYPES = list(REGISTRY)


def test_the_table_has_a_row_for_every_registered_type() -> None:
    assert set(TABLE) == set(REGISTRY)


def _record(ioc_type: str) -> Any:
    return make_ioc(ioc_type, REGISTRY[ioc_type].example, confidence="high")


@pytest.mark.parametrize("ioc_type", TYPES)
def test_stix(ioc_type: str, ctx: ExportContext, check: Any) -> None:
    record = _record(ioc_type)
    bundle = check.stix(StixExporter().render([record], ctx))
    [primary] = bundle["objects"][1:2]  # the spec order: the identity, then one object per record
    expected = TABLE[ioc_type].stix
    if ":" in expected:
        assert primary["type"] == "indicator"
        assert primary["pattern"] == f"[{expected} = '{record.value}']"
    else:
        assert primary["type"] == expected and primary["name"] == record.value


@pytest.mark.parametrize("ioc_type", TYPES)
def test_misp(ioc_type: str, ctx: ExportContext, check: Any) -> None:
    event = check.misp(MispExporter().render([_record(ioc_type)], ctx))
    [attribute] = event["Event"]["Attribute"]
    assert (attribute["type"], attribute["category"], attribute["to_ids"]) == TABLE[ioc_type].misp


@pytest.mark.parametrize("ioc_type", TYPES)
def test_cef(ioc_type: str, ctx: ExportContext, check: Any) -> None:
    record = _record(ioc_type)
    [line] = check.cef(CefExporter().render([record], ctx))
    name, key = TABLE[ioc_type].cef
    assert line["name"] == name and line["device"]["event_class_id"] == f"ioc-{ioc_type}"
    assert line["extension"]["cs1"] == record.value
    typed = TYPED_CEF_KEYS & set(line["extension"])
    assert typed == ({key} if key else set())
    assert not key or line["extension"][key] == record.value


@pytest.mark.parametrize("ioc_type", TYPES)
def test_openioc(ioc_type: str, ctx: ExportContext, check: Any) -> None:
    doc = check.openioc(OpenIocExporter().render([_record(ioc_type)], ctx))
    contexts = [c.get("search") for c in doc.iter(f"{NS}Context")]
    description = doc.find(f"{NS}metadata/{NS}description").text
    term = TABLE[ioc_type].openioc
    if term is None:
        assert contexts == [] and "1 " in description and "record(s) omitted" in description
    else:
        assert contexts == [term] and term in check.openioc_terms() and "omitted" not in description


@pytest.mark.parametrize("ioc_type", TYPES)
def test_sigma(ioc_type: str, ctx: ExportContext, check: Any) -> None:
    body = SigmaExporter().render([_record(ioc_type)], ctx)
    check.sigma(body)
    collection = SigmaCollection.from_yaml(body.decode())  # as written: the check's backends map the fields
    expected = TABLE[ioc_type].sigma
    if expected is None:
        assert collection.rules == []
        assert f"# 1 {REGISTRY[ioc_type].label} record(s) omitted: ".encode() in body
    else:
        [rule] = collection.rules
        [item] = rule.detection.detections["selection"].detection_items
        assert (rule.logsource.category, item.field) == expected and b"omitted" not in body


@pytest.mark.parametrize("ioc_type", TYPES)
def test_hunting_queries(ioc_type: str) -> None:
    value = REGISTRY[ioc_type].example
    queries = hunting_queries(ioc_type, value)
    splunk, elastic, sentinel = TABLE[ioc_type].hunting
    assert f'{splunk}="{value}"' in queries["splunk_spl"]
    assert f'{elastic}: "{value}"' in queries["elastic_kql"]
    assert sentinel in queries["sentinel_kql"] and f'@"{value}"' in queries["sentinel_kql"]


@pytest.mark.parametrize("ioc_type", TYPES)
def test_taxii_collection(ioc_type: str) -> None:
    holding = {c.id for c in COLLECTIONS if ioc_type in c.ioc_types}
    expected = TABLE[ioc_type].taxii
    assert holding == {"all-iocs", *([expected] if expected else [])}
