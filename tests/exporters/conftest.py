"""Fixtures for the exporter tests: IOC records built directly, and each format's independent validator.

The validators are the formats' own tools, never our code: stix2-validator (strict) and ``stix2.parse``;
PyMISP's ``data/schema.json`` and ``MISPAttribute(strict=True)``; ``cefp`` and ``cefevent`` (strict);
lxml with the OpenIOC 1.1 XSD; pySigma with its core validators and the Splunk and Elasticsearch backends;
and for the network formats the tools in tests/format_tools.py (named-checkzone, suricata-check, the ECS
field definitions).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import format_tools
import orjson
import pytest
from stix_support import validate_stix

from exporters.base import ArticleRef, ExportContext
from store.indicators import normalize
from store.records import Ioc

REPO = Path(__file__).resolve().parents[2]
OPENIOC_DIR = REPO.parent / "shared" / "data" / "openioc"
NOW = datetime(2026, 11, 23, 13, 0, tzinfo=UTC)
# Validators that need ATT&CK / D3FEND data downloads: excluded offline.
SIGMA_DOWNLOAD_VALIDATORS = ("attacktag", "d3_fendtag")

IocFactory = Callable[..., Ioc]


def make_ioc(ioc_type: str, value: str, **fields: Any) -> Ioc:
    """A record as the store would hand it back: normalised value, sensible defaults."""
    first = fields.pop("first_seen", NOW - timedelta(days=2))
    base: dict[str, Any] = {
        "confidence": "medium", "feed_name": "CISA Advisories", "source_category": "government",
        "first_seen": first, "last_seen": fields.pop("last_seen", NOW - timedelta(hours=3)),
        "modified": fields.pop("modified", NOW - timedelta(hours=3)), "sources": ["CISA Advisories"],
    }
    base.update(fields)
    return Ioc(ioc_type, normalize(ioc_type, value) if ioc_type != "url" else value, **base)


def sample_records() -> list[Ioc]:
    """A realistic mix: every type, all confidences, articles, CVEs, techniques, one value of each shape."""
    techniques = ["T1566.001", "T1071.001", "T1190", "T1059.001"]
    records = [
        make_ioc("ipv4", "185.220.101.4", confidence="high", article_ids=["a1", "a2"], cves=["CVE-2024-3400"],
                 techniques=["T1190"], industries=["finance", "energy"], sources=["CISA Advisories", "Talos"]),
        make_ioc("ipv6", "2001:DB8:0:0:0:0:0:1", confidence="low", feed_name="Abuse.ch", source_category="community"),
        make_ioc("domain", "Login-Microsoft-Verify.COM", confidence="high", article_ids=["a1"],
                 techniques=["T1566.001"]),
        make_ioc("url", "https://evil.example/gate.php?id=7&x=*", feed_name="Talos", source_category="commercial",
                 article_ids=["a3"], techniques=["T1071.001"]),
        make_ioc("md5", "44D88612FEA8A8F36DE82E1278ABB02F", confidence="high", cves=["CVE-2023-23397"]),
        make_ioc("sha1", "3395856ce81f2b7382dee72602f798b642f14140"),
        make_ioc("sha256", "275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f", confidence="high",
                 techniques=["T1059.001"], article_ids=["a2"]),
        make_ioc("sha512", "f" * 128, confidence="low"),
        make_ioc("email", "Invoice@Billing-Update.example", techniques=["T1566.001"]),
        make_ioc("cve", "CVE-2024-3400", confidence="high", article_ids=["a1"], techniques=["T1190"]),
    ]
    for n in range(30):  # volume per log source, so grouping and several confidences show
        records.append(make_ioc("ipv4", f"45.9.{n}.{n + 1}", confidence=("high", "medium", "low")[n % 3],
                                techniques=[techniques[n % 4]], feed_name=f"Feed {n % 5}"))
        records.append(make_ioc("domain", f"c2-{n}.bad-host.net", confidence=("high", "medium", "low")[n % 3]))
    return records


def sample_context(articles: dict[str, ArticleRef] | None = None) -> ExportContext:
    refs = articles if articles is not None else {
        "a1": ArticleRef("PAN-OS GlobalProtect exploited", "https://www.cisa.gov/news/a1", "CISA Advisories"),
        "a2": ArticleRef("Loader campaign", "https://blog.talosintelligence.com/a2", "Talos"),
        "a3": ArticleRef("Phishing kit & gate", "https://example.org/a3?x=1", "Example News"),
    }
    return ExportContext(generated_at=NOW, since=NOW - timedelta(days=7), until=NOW, tier="pro", articles=refs)


@pytest.fixture(scope="session")
def records() -> list[Ioc]:
    return sample_records()


@pytest.fixture(scope="session")
def ctx() -> ExportContext:
    return sample_context()


@pytest.fixture(scope="session")
def ioc() -> IocFactory:
    """Build a record: ``ioc("domain", "Evil.COM", confidence="high")`` (value normalised like the store)."""
    return make_ioc


@pytest.fixture(scope="session")
def now() -> datetime:
    return NOW


@pytest.fixture(scope="session")
def make_ctx() -> Callable[..., ExportContext]:
    """``make_ctx(articles)``: the sample context, optionally with other articles."""
    return sample_context


@dataclass
class Checks:
    """Each format's independent validator; each returns the parsed document for round-trip assertions."""

    def stix(self, body: bytes) -> dict[str, Any]:
        return validate_stix(body)

    def misp(self, body: bytes) -> dict[str, Any]:
        import jsonschema
        import pymisp
        from pymisp import MISPAttribute

        event: dict[str, Any] = orjson.loads(body)
        schema = json.loads((Path(pymisp.__file__).parent / "data" / "schema.json").read_text())
        jsonschema.Draft4Validator(schema).validate(event)
        for attribute in event["Event"]["Attribute"]:
            MISPAttribute(strict=True).from_dict(**copy.deepcopy(attribute))
        return event

    def cef(self, body: bytes) -> list[dict[str, Any]]:
        import cefp
        from cefevent.event import CEFEvent
        from cefevent.extensions import extension_dictionary

        text = body.decode("utf-8")
        assert text == "" or text.endswith("\n")
        parsed = []
        strict = CEFEvent(strict=True)  # one instance: building its key dictionary is the slow part
        for line in text.split("\n")[:-1]:
            record = cefp.parse(line)
            for key, value in record["extension"].items():
                assert key in extension_dictionary, key
                if value.strip():  # cefevent strips values and refuses empty ones; the key is checked above
                    strict.set_field(key, value)
            parsed.append(record)
        return parsed

    def openioc(self, body: bytes) -> Any:
        from lxml import etree

        if not (OPENIOC_DIR / "ioc.xsd").exists():
            pytest.skip(f"OpenIOC schema not found at {OPENIOC_DIR} (the shared data folder beside the repo)")
        schema = etree.XMLSchema(etree.parse(str(OPENIOC_DIR / "ioc.xsd")))
        doc = etree.fromstring(body)
        assert schema.validate(doc), [str(e) for e in schema.error_log]
        return doc

    def openioc_terms(self) -> set[str]:
        from lxml import etree

        if not (OPENIOC_DIR / "current.iocterms").exists():
            pytest.skip(f"OpenIOC term list not found at {OPENIOC_DIR}")
        # The file opens with a licence comment before its XML declaration: parse from the root element on.
        text = (OPENIOC_DIR / "current.iocterms").read_text(encoding="utf-8-sig")
        root = etree.fromstring(text[text.index("<ioctermlist"):].encode())
        return {term.get("text") for term in root.iter("{http://openioc.org/schemas/OpenIOC_1.1}iocterm")}

    def sigma(self, body: bytes, allowed_issues: Callable[[Any], bool] = lambda issue: False) -> Any:
        from sigma.backends.elasticsearch import LuceneBackend
        from sigma.backends.splunk import SplunkBackend
        from sigma.collection import SigmaCollection
        from sigma.pipelines.elasticsearch import ecs_windows
        from sigma.pipelines.splunk import splunk_windows_pipeline
        from sigma.validation import SigmaValidator
        from sigma.validators.core import validators

        collection = SigmaCollection.from_yaml(body.decode("utf-8"))
        assert all(not rule.errors for rule in collection.rules)
        checks = [cls for name, cls in validators.items() if name not in SIGMA_DOWNLOAD_VALIDATORS]
        issues = [i for i in SigmaValidator(checks).validate_rules(collection) if not allowed_issues(i)]
        assert not issues, issues
        for backend in (SplunkBackend(splunk_windows_pipeline()), LuceneBackend(ecs_windows())):
            queries = backend.convert(collection)
            assert len(queries) == len(collection.rules)
        return collection


    blocklist = staticmethod(format_tools.blocklist)
    rpz = staticmethod(format_tools.rpz)
    suricata = staticmethod(format_tools.suricata)
    ecs = staticmethod(format_tools.ecs)

    def all(self) -> dict[str, Callable[[bytes], Any]]:
        """Each export format's validator by format id."""
        from exporters.registry import EXPORTERS

        return {fmt: getattr(self, fmt) for fmt in EXPORTERS}


@pytest.fixture(scope="session")
def check() -> Checks:
    return Checks()
