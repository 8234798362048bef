"""Hunting queries and the explained risk score of /lookup (pure functions)."""

from __future__ import annotations

import re
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from exporters.lookup_risk import hunting_queries, risk_score
from store.records import Ioc, utcnow

QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
VERBATIM = re.compile(r'@"((?:[^"]|"")*)"')


def _ioc(**changes) -> Ioc:
    now = utcnow()
    base = dict(type="ipv4", value="203.0.113.9", confidence="high", feed_name="CISA", source_category="government",
                first_seen=now, last_seen=now, modified=now, sources=["CISA", "Talos"], cves=["CVE-2024-3400"])
    base.update(changes)
    return Ioc(**base)


def test_every_type_gets_three_queries_naming_the_value() -> None:
    for ioc_type, value in [("ipv4", "203.0.113.9"), ("ipv6", "2001:db8::1"), ("domain", "evil.example.net"),
                            ("url", "http://evil.example.net/a?b=c"), ("md5", "a" * 32), ("sha1", "b" * 40),
                            ("sha256", "c" * 64), ("sha512", "d" * 128), ("email", "x@evil.example.net"),
                            ("cve", "CVE-2024-3400")]:
        queries = hunting_queries(ioc_type, value)
        assert set(queries) == {"splunk_spl", "elastic_kql", "sentinel_kql"}
        assert all(value in q for q in queries.values()), (ioc_type, queries)
    assert "file.hash.sha256" in hunting_queries("sha256", "c" * 64)["elastic_kql"]
    assert "SHA256" in hunting_queries("sha256", "c" * 64)["sentinel_kql"]


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_hostile_values_stay_inside_their_string_literals(value: str) -> None:
    queries = hunting_queries("url", value)
    for language in ("splunk_spl", "elastic_kql"):
        literals = [m.group(1) for m in QUOTED.finditer(queries[language])]
        unescaped = [re.sub(r"\\(.)", r"\1", lit, flags=re.S) for lit in literals]
        assert unescaped and all(u == value for u in unescaped)
    verbatim = [m.group(1).replace('""', '"') for m in VERBATIM.finditer(queries["sentinel_kql"])]
    assert verbatim == [value]


def test_risk_is_explained_and_bounded() -> None:
    score, factors = risk_score(_ioc(), utcnow())
    assert 0 < score <= 100 and score == sum(f.points for f in factors)
    assert any("confidence high" in f.factor for f in factors)
    weak, _ = risk_score(_ioc(confidence="low", sources=["x"], source_category="community", cves=[],
                              last_seen=utcnow() - timedelta(days=90)), utcnow())
    assert weak < score
