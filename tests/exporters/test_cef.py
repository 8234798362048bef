"""CEF lines, parsed back by cefp and checked key by key with cefevent in strict mode."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cefp

from exporters.base import ExportContext
from exporters.cef import CUT_MARKER, CefExporter, ext_escape, header_escape, related
from exporters.stix import stix_object
from store.records import Ioc


def test_one_line_per_ioc_parsed_back(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    parsed = check.cef(CefExporter().render(records, ctx))
    assert len(parsed) == len(records)
    for record, line in zip(records, parsed, strict=True):
        assert line["version"] == "0"
        assert line["device"] == {"vendor": "ctiwire", "product": "ctiwire", "version": "1.0",
                                  "event_class_id": f"ioc-{record.type}"}
        ext = line["extension"]
        assert ext["cs1"] == record.value and ext["cs1Label"] == "Indicator"
        assert ext["cs2"] == record.feed_name and ext["cs4"] == record.confidence
        assert ext["cs5"] == stix_object(record)["id"]  # the id the STIX export gives the record
        assert int(ext["start"]) == int(record.first_seen.timestamp() * 1000)
        assert line["severity"] == {"high": "8", "medium": "5", "low": "3"}[record.confidence]


def test_typed_keys(records: list[Ioc], ctx: ExportContext, check: Any) -> None:
    parsed = check.cef(CefExporter().render(records[:10], ctx))
    typed = {r.type: line["extension"] for r, line in zip(records, parsed, strict=False)}
    assert typed["ipv4"]["dst"] == "185.220.101.4"
    assert typed["ipv6"]["c6a1"] == "2001:db8::1"
    assert typed["domain"]["dhost"] == "login-microsoft-verify.com"
    assert typed["url"]["request"] == "https://evil.example/gate.php?id=7&x=*"
    assert typed["sha256"]["fileHash"].startswith("275a02")
    assert typed["email"]["suser"] == "invoice@billing-update.example"
    assert typed["cve"]["cs6"] == "T1190"


def test_escaping_per_the_cef_spec() -> None:
    # CEF spec, "Character Encoding": header \| and \\ ; extension \= and \\ and \n (pipes stay as they are).
    assert header_escape("a|b\\c") == "a\\|b\\\\c"
    assert ext_escape("a=b\\c|d\ne\rf") == "a\\=b\\\\c|d\\ne\\rf"


def test_hostile_feed_name_stays_in_its_field(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    feed = "Feed | x=1 cs3=forged \\ \n act=blocked\r"
    body = CefExporter().render([ioc("url", "http://x.example/a=b|c\\d e", feed_name=feed)], ctx)
    assert body.count(b"\n") == 1
    [line] = check.cef(body)
    assert line["extension"]["cs2"] == feed and line["extension"]["cs3"] == "government"
    assert line["extension"]["cs1"] == "http://x.example/a=b|c\\d e" and "act" not in line["extension"]


def test_trailing_blanks_survive_a_line_strip(ioc: Callable[..., Ioc], ctx: ExportContext) -> None:
    body = CefExporter().render([ioc("url", "http://x.example/ ", feed_name="Feed  ")], ctx).decode()
    ext = cefp.parse(body.strip())["extension"]  # a collector trimming the line loses nothing
    assert ext["cs1"] == "http://x.example/ " and ext["cs2"] == "Feed  "


def test_overlong_values_skip_the_typed_key(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    url = "http://x.example/" + "a" * 2000
    [line] = check.cef(CefExporter().render([ioc("url", url)], ctx))
    assert "request" not in line["extension"] and line["extension"]["cs1"] == url


def test_streamed_in_batches_and_empty_body(ioc: Callable[..., Ioc], ctx: ExportContext) -> None:
    many = [ioc("ipv4", f"10.0.{n // 256}.{n % 256}") for n in range(1200)]
    chunks = list(CefExporter().encode(many, ctx))
    assert len(chunks) == 3 and all(c.endswith(b"\n") for c in chunks)
    assert CefExporter().render([], ctx) == b""


def test_every_value_within_its_keys_length(ioc: Callable[..., Ioc], ctx: ExportContext, check: Any) -> None:
    from cefevent.extensions import extension_dictionary

    cves = [f"CVE-2024-{n:05d}" for n in range(1, 2001)]
    row = ioc("url", "http://x.example/" + "a" * 5000, cves=cves, techniques=["T1190"], feed_name="F" * 5000)
    [line] = check.cef(CefExporter().render([row], ctx))
    ext = line["extension"]
    for key, value in ext.items():
        limit = extension_dictionary[key]["length"]
        assert not limit or len(value) <= limit, (key, len(value), limit)
    kept, marker = ext["cs6"].rsplit(" ", 2)[0].split(" "), ext["cs6"].rsplit(" ", 2)[1:]
    assert kept == cves[:len(kept)] and marker == [f"(+{len(cves) + 1 - len(kept)}", "more)"]  # whole ids only
    assert len(ext["cs6"]) > 3900 and ext["cs2"] == "F" * (4000 - len(CUT_MARKER)) + CUT_MARKER
    assert ext["cs1"].endswith(CUT_MARKER) and len(ext["cs1"]) == 4000 and "request" not in ext


def test_a_short_related_list_travels_whole() -> None:
    assert related(["CVE-2024-3400", "T1190"]) == "CVE-2024-3400 T1190"
    assert related(["a" * 10, "b" * 10, "c" * 10], limit=30) == "aaaaaaaaaa (+2 more)"
