"""OpenIOC 1.1 documents of IOC records, written incrementally with lxml.

The document follows the OpenIOC 1.1 schema (``../shared/data/openioc/ioc.xsd``): ``metadata``, then
``criteria`` holding one top-level ``Indicator operator="OR"`` with one ``IndicatorItem`` per IOC, then
``parameters`` that attach each record's feed, source category and confidence to its item (``ref-id``).
Search terms come from the official term list (``current.iocterms``), one per type in the registry
(``store.ioctypes``). Types with no term there (SHA-512 hashes, CVE ids, ATT&CK technique ids) are left
out and counted, with the reason, in the description.
An empty result is one empty ``Indicator`` (the schema wants at least one, and allows it to be empty).

XML 1.0 cannot carry most C0 control characters, even escaped; they are replaced by U+FFFD, the only
loss this format imposes. Everything else, markup characters included, is escaped by lxml.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

from lxml import etree

from config.tiers import SCOPE_EXPORTS
from exporters.base import PRODUCT, ExportContext, Exporter, records_digest, stable_uuid, unique_records
from store.ioctypes import OpenIocTerm, mapping, skipped_note, supported
from store.records import Ioc, iso

NS = "http://openioc.org/schemas/OpenIOC_1.1"
ITEMS_PER_FLUSH = 400


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot represent replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def _q(tag: str) -> str:
    return f"{{{NS}}}{tag}"


def item_id(ioc: Ioc) -> str:
    return stable_uuid("openioc-item", ioc.type, ioc.value)


def document_id(iocs: Sequence[Ioc], ctx: ExportContext) -> str:
    return stable_uuid("openioc", ctx.range_text, ctx.tier, records_digest(iocs))


def _leaf(xf: Any, tag: str, text: str, attrib: dict[str, str] | None = None) -> None:
    with xf.element(_q(tag), attrib or {}):
        xf.write(xml_text(text))


def _metadata(xf: Any, ctx: ExportContext, kept: int, skipped: list[str]) -> None:
    with xf.element(_q("metadata")):
        _leaf(xf, "short_description", f"{PRODUCT} IOCs {ctx.range_text}")
        note = "".join(f" {line}." for line in skipped)
        _leaf(xf, "description", f"{kept} indicator(s) first seen or updated from {ctx.range_text} "
                                 f"({ctx.tier} tier).{note}")
        _leaf(xf, "keywords", f"{PRODUCT} threat-intelligence iocs")
        _leaf(xf, "authored_by", PRODUCT)
        _leaf(xf, "authored_date", iso(ctx.generated_at))


def _item(xf: Any, ioc: Ioc, ref: str) -> None:
    term = mapping(ioc.type, "openioc", OpenIocTerm)
    attrib = {"id": ref, "condition": "is", "negate": "false",
              "preserve-case": "true" if term.case_sensitive else "false"}
    document = term.search.split("/", 1)[0]
    with xf.element(_q("IndicatorItem"), attrib):
        with xf.element(_q("Context"), {"document": document, "search": term.search, "type": term.context}):
            pass
        _leaf(xf, "Content", ioc.value, {"type": term.content})


def _params(xf: Any, ioc: Ioc, ref: str) -> None:
    for name, value in (("feed", ioc.feed_name), ("source-category", ioc.source_category),
                        ("confidence", ioc.confidence)):
        with xf.element(_q("param"), {"id": stable_uuid("openioc-param", ref, name), "ref-id": ref, "name": name}):
            _leaf(xf, "value", value, {"type": "string"})


def _drain(buffer: io.BytesIO) -> bytes:
    data = buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    return data


class OpenIocExporter(Exporter):
    """One OpenIOC 1.1 document, streamed: lxml's incremental writer is drained every few hundred items."""

    format_id: ClassVar[str] = "openioc"
    media_type: ClassVar[str] = "application/xml"
    extension: ClassVar[str] = "ioc.xml"
    scope: ClassVar[str] = SCOPE_EXPORTS
    summary: ClassVar[str] = "OpenIOC 1.1 XML document"

    def encode(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        kept = [(ioc, item_id(ioc)) for ioc in unique_records(iocs) if supported(ioc.type, "openioc")]
        buffer = io.BytesIO()
        root = {"id": document_id(iocs, ctx), "last-modified": iso(ctx.until),
                "published-date": iso(ctx.generated_at)}
        with etree.xmlfile(buffer, encoding="utf-8") as xf:
            xf.write_declaration()
            with xf.element(_q("OpenIOC"), root, nsmap={None: NS}):
                _metadata(xf, ctx, len(kept), skipped_note([ioc.type for ioc in iocs], "openioc"))
                with xf.element(_q("criteria")):
                    with xf.element(_q("Indicator"), {"operator": "OR", "id": stable_uuid("openioc-or", root["id"])}):
                        yield from self._each(xf, buffer, kept, _item)
                with xf.element(_q("parameters")):
                    yield from self._each(xf, buffer, kept, _params)
        yield _drain(buffer)

    @staticmethod
    def _each(xf: Any, buffer: io.BytesIO, kept: list[tuple[Ioc, str]],
              write: Callable[[Any, Ioc, str], None]) -> Iterator[bytes]:
        for n, (ioc, ref) in enumerate(kept, 1):
            write(xf, ioc, ref)
            if n % ITEMS_PER_FLUSH == 0:
                xf.flush()
                yield _drain(buffer)
