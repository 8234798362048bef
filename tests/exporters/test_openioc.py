"""OpenIOC 1.1 documents, validated with lxml against the OpenIOC 1.1 XSD; terms from current.iocterms."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from exporters.base import ExportContext
from exporters.openioc import NS, OpenIocExporter
from store.records import Ioc

Q = f"{{{NS}}}"


def items(doc: Any) -> list[Any]:
    return list(doc.iter(f"{Q}IndicatorItem"))


def params(doc: Any) -> dict[tuple[str, str], str]:
    return {(p.get("ref-id"), p.get("name")): p.find(f"{Q}value").text or "" for p in doc.iter(f"{Q}param")}


def test_document_is_valid_and_uses_official_terms(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    doc = check.openioc(OpenIocExporter().render(records, ctx))
    terms = check.openioc_terms()
    found = items(doc)
    assert len(found) == len([r for r in records if r.type not in ("sha512", "cve")])
    for item in found:
        context = item.find(f"{Q}Context")
        assert context.get("search") in terms
        assert context.get("document") == context.get("search").split("/")[0]
    searches = {item.find(f"{Q}Content").text: item.find(f"{Q}Context").get("search") for item in found}
    assert searches["185.220.101.4"] == "PortItem/remoteIP"
    assert searches["login-microsoft-verify.com"] == "Network/DNS"
    assert searches["https://evil.example/gate.php?id=7&x=*"] == "UrlHistoryItem/URL"
    assert searches["44d88612fea8a8f36de82e1278abb02f"] == "FileItem/Md5sum"
    assert searches["invoice@billing-update.example"] == "Email/From"


def test_parameters_carry_feed_and_confidence(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    doc = check.openioc(OpenIocExporter().render(records, ctx))
    by_ref = params(doc)
    first = items(doc)[0].get("id")
    assert by_ref[(first, "feed")] == "CISA Advisories" and by_ref[(first, "confidence")] == "high"
    ids = {i.get("id") for i in items(doc)}
    assert {ref for ref, _ in by_ref} == ids


def test_omitted_types_are_counted(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    doc = check.openioc(OpenIocExporter().render(records, ctx))
    assert "2 SHA-512, CVE or ATT&CK technique record(s) omitted" in doc.find(f"{Q}metadata/{Q}description").text


def test_xml_specials_round_trip_and_control_characters(ioc: Callable[..., Ioc], ctx: ExportContext,
                                                       check: Any) -> None:
    url = "http://x.example/<a href='x'>&amp;]]>\"\r\n"
    feed = "Feed <&> \x00\x1b end"
    doc = check.openioc(OpenIocExporter().render([ioc("url", url, feed_name=feed)], ctx))
    [item] = items(doc)
    assert item.find(f"{Q}Content").text == url
    assert params(doc)[(item.get("id"), "feed")] == "Feed <&> \ufffd\ufffd end"  # XML 1.0 cannot carry C0 controls


def test_empty_document_is_valid(ctx: ExportContext, check: Any) -> None:
    doc = check.openioc(OpenIocExporter().render([], ctx))
    [indicator] = doc.iter(f"{Q}Indicator")
    assert len(indicator) == 0


def test_streams_in_several_chunks(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    many = [ioc("domain", f"h{n}.example") for n in range(1000)]
    chunks = list(OpenIocExporter().encode(many, ctx))
    assert len(chunks) > 3
    assert len(items(check.openioc(b"".join(chunks)))) == 1000
