"""Property test: hostile text in values, feed names, source names and article fields.

Pipes, equals signs, backslashes, line breaks, markup, YAML syntax, wildcards and unicode go into every
format; each document must still pass its own validator (nothing injected: no extra line, key, element
or rule) and give back every value exactly (nothing lost). XML 1.0 cannot hold C0 control characters at
all, so OpenIOC is expected to carry them as U+FFFD; Sigma's validators rightly flag control characters
and escaped wildcards inside values, so those two findings are allowed when the value has them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sigma.validators.core.values import ControlCharacterIssue, EscapedWildcardIssue
from stix2patterns.pattern import Pattern

from exporters.base import ArticleRef, ExportContext
from exporters.blocklist import BlocklistExporter, listable
from exporters.caps import clip
from exporters.cef import CefExporter
from exporters.ecs import EcsExporter
from exporters.misp import MispExporter
from exporters.openioc import NS, OpenIocExporter, xml_text
from exporters.rpz import RpzExporter
from exporters.sigma import SigmaExporter
from exporters.stix import StixExporter
from exporters.suricata import SuricataExporter
from store.records import Ioc

SPECIALS = ["|", "=", "\\", "\n", "\r", "\r\n", "<", ">", "&", "'", '"', "]]>", "<!--", "---", "...", "- ", ": ",
            "#", "{", "}", "[", "]", "*", "?", "%", "!", "&a", "*a", "@", "`", "\t", "\x00", "\x1b", "\x7f", "\x85",
            "\u2028", "\u2029", "\ufeff", "é", "日本", "😈", " ", "  ", "cs3=", "CEF:0|", "\\n", "\\=", "\\|"]
hostile = st.lists(st.one_of(st.sampled_from(SPECIALS), st.text(max_size=6)), min_size=1, max_size=8).map("".join)
Q = f"{{{NS}}}"


def build(ioc: Callable[..., Ioc], make_ctx: Callable[..., ExportContext], path: str, feed: str, source: str,
          title: str) -> tuple[list[Ioc], ExportContext]:
    url = "http://h.example/" + path
    records = [
        ioc("url", url, feed_name=feed, sources=[feed, source], article_ids=["a1"], confidence="high"),
        ioc("domain", "h.example", feed_name=feed, sources=[source], article_ids=["a1"]),
        ioc("sha256", "a" * 64, feed_name=source, confidence="low"),
    ]
    return records, make_ctx({"a1": ArticleRef(title, "https://news.example/a1", source)})


def pattern_literal(pattern: str) -> str:
    (_type, [(_path, _op, literal)]), = Pattern(pattern).inspect().comparisons.items()
    return str(literal[1:-1]).replace("\\'", "'").replace("\\\\", "\\")


def sigma_findings_allowed(value: str) -> Callable[[Any], bool]:
    def allowed(issue: Any) -> bool:
        if isinstance(issue, EscapedWildcardIssue):
            return "*" in value or "?" in value
        return isinstance(issue, ControlCharacterIssue) and any(ord(c) < 32 for c in value)
    return allowed


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=hostile, feed=hostile, source=hostile, title=hostile)
@example(path="a|b=c\\d\ne\r*?<&>]]>\x00\u2028\x85%{x}", feed=" x\ncs3=y|z\\ ", source="",
         title="---\n- a: b\n...")
@example(path="?", feed="\\", source="CEF:0|a|b|", title="")
def test_nothing_lost_nothing_injected(ioc: Callable[..., Ioc], make_ctx: Callable[..., ExportContext], check: Any,
                                       path: str, feed: str, source: str, title: str) -> None:
    records, ctx = build(ioc, make_ctx, path, feed, source, title)
    url = records[0].value
    check_stix(check, records, ctx, url, source, title)
    check_misp(check, records, ctx, url, feed)
    check_cef(check, records, ctx, url, feed, source)
    check_openioc(check, records, ctx, url, feed)
    check_sigma(check, records, ctx, url, feed)
    check_network_formats(check, records, ctx, url, feed)


def check_stix(check: Any, records: list[Ioc], ctx: ExportContext, url: str, source: str, title: str) -> None:
    bundle = check.stix(StixExporter().render(records, ctx))
    indicators = [o for o in bundle["objects"] if o["type"] == "indicator"]
    assert len(indicators) == 3
    assert [o["type"] for o in bundle["objects"][4:]] == ["marking-definition", "report"]
    assert pattern_literal(indicators[0]["pattern"]) == url
    cited = {"source_name": source or "ctiwire", "url": "https://news.example/a1", "external_id": "a1"}
    assert indicators[0]["external_references"] == [{**cited, "description": clip(title)}]
    assert bundle["objects"][5]["external_references"] == [cited]  # the report's name is the title
    assert bundle["objects"][5]["name"] == (clip(title) or "https://news.example/a1")


def check_misp(check: Any, records: list[Ioc], ctx: ExportContext, url: str, feed: str) -> None:
    attributes = check.misp(MispExporter().render(records, ctx))["Event"]["Attribute"]
    assert [a["value"] for a in attributes] == [url, "h.example", "a" * 64]
    assert attributes[0]["comment"].startswith(feed + " (government)")


def check_cef(check: Any, records: list[Ioc], ctx: ExportContext, url: str, feed: str, source: str) -> None:
    body = CefExporter().render(records, ctx)
    assert body.count(b"\n") == 3
    lines = check.cef(body)
    assert [line["extension"]["cs1"] for line in lines] == [url, "h.example", "a" * 64]
    assert [line["extension"].get("cs2", "") for line in lines] == [feed, feed, source]
    expected_keys = {"cat", "start", "end", "rt", "deviceCustomDate1", "deviceCustomDate1Label"} | {
        f"cs{n}{s}" for n in (1, 3, 4, 5) for s in ("", "Label")}
    for line in lines:
        keys = set(line["extension"]) - {"request", "dhost", "fileHash", "cs2", "cs2Label", "cn1", "cn1Label"}
        assert keys == expected_keys


def check_openioc(check: Any, records: list[Ioc], ctx: ExportContext, url: str, feed: str) -> None:
    doc = check.openioc(OpenIocExporter().render(records, ctx))
    contents = [c.text or "" for c in doc.iter(f"{Q}Content")]
    assert contents == [xml_text(url), "h.example", "a" * 64]
    feeds = [p.find(f"{Q}value").text or "" for p in doc.iter(f"{Q}param") if p.get("name") == "feed"]
    assert feeds[:2] == [xml_text(feed)] * 2


def check_sigma(check: Any, records: list[Ioc], ctx: ExportContext, url: str, feed: str) -> None:
    body = SigmaExporter().render(records, ctx)
    collection = check.sigma(body, sigma_findings_allowed(url))
    assert len(collection.rules) == 3
    proxy = next(r for r in collection.rules if r.logsource.category == "proxy")
    [item] = proxy.detection.detections["selection"].detection_items
    assert ["".join(p if isinstance(p, str) else "<wildcard>" for p in v.s) for v in item.original_value] == [url]
    docs = list(yaml.safe_load_all(body))
    assert len(docs) == 3 and all(set(d) <= {"title", "id", "status", "description", "references", "author", "date",
                                             "modified", "tags", "logsource", "detection", "falsepositives",
                                             "level"} for d in docs)
    assert feed in orjson.loads(orjson.dumps(docs[1]["description"]))


def check_network_formats(check: Any, records: list[Ioc], ctx: ExportContext, url: str, feed: str) -> None:
    listed = check.blocklist(BlocklistExporter().render(records, ctx))
    assert listed.get("url", []) == ([url] if listable(url) else []) and listed["domain"] == ["h.example"]
    assert {owner for owner, rtype, _ in check.rpz(RpzExporter().render(records, ctx)) if rtype == "CNAME"} == {
        "h.example.rpz.ctiwire.", "*.h.example.rpz.ctiwire."}
    assert len(check.suricata(SuricataExporter().render(records, ctx))) in (3, 4)  # the URL's rule: an HTTP URL
    documents = check.ecs(EcsExporter().render(records, ctx))
    assert documents[0]["threat.indicator.url.full"] == url and documents[0]["threat.indicator.provider"] == feed
