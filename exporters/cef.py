"""CEF (ArcSight Common Event Format) lines, one per IOC record, syslog-ready.

Escaping follows the CEF specification ("Character Encoding"): in the header a pipe and a backslash are
escaped with a backslash; in the extension a backslash, an equals sign and line breaks (``\\n``,
``\\r``) are. The header never carries record data (vendor, product, type-keyed signature id and name are
ours), so a hostile value or feed name can only land in the extension, where it is escaped; every line
ends with the numeric ``rt`` field, so a value's trailing blanks cannot be trimmed by a collector.
Extension keys are all from the CEF key dictionary (``cefevent`` accepts each in strict mode), and every
value stays within its key's length in that dictionary: the typed keys by the registry's ``Cef.max_length``
(a longer value travels in ``cs1`` alone), the ``csN`` strings within 4,000 characters. A longer string is
cut and ends with a marker; the list of related CVEs and techniques is cut between ids and ends with
``(+N more)``, so a parser splitting it on blanks never sees half an id.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import ClassVar

from config.tiers import SCOPE_EXPORTS
from exporters.base import PRODUCT, ExportContext, Exporter
from store import decay
from store.ioctypes import Cef, mapping
from store.records import Ioc

CEF_VERSION = "0"
DEVICE_VERSION = "1.0"
LINES_PER_CHUNK = 500
# CEF severity 0-10: High 7-8, Medium 4-6, Low 0-3 (CEF spec, "Severity").
SEVERITIES: dict[str, int] = {"high": 8, "medium": 5, "low": 3}
# CEF spec, "ArcSight Extension Dictionary": deviceCustomString1-6 hold at most 4,000 characters.
CS_MAX_LENGTH = 4000
CUT_MARKER = "...[cut]"


def header_escape(text: str) -> str:
    """CEF header field: ``\\`` and ``|`` escaped; line breaks cannot be escaped there, so become spaces."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def ext_escape(text: str) -> str:
    """CEF extension value: ``\\``, ``=`` and line breaks escaped (the pipe needs none there)."""
    # Chained str.replace: C-speed, and a no-op scan for the usual clean value (str.translate is 4x slower).
    return text.replace("\\", "\\\\").replace("=", "\\=").replace("\n", "\\n").replace("\r", "\\r")


def fit(text: str, limit: int = CS_MAX_LENGTH) -> str:
    """``text``, or its start and ``CUT_MARKER`` in ``limit`` characters when it is longer."""
    return text if len(text) <= limit else text[:limit - len(CUT_MARKER)] + CUT_MARKER


def related(ids: Sequence[str], limit: int = CS_MAX_LENGTH) -> str:
    """The ids blank-separated; past ``limit`` whole ids only, then ``(+N more)`` (room for it kept)."""
    text = " ".join(ids)
    if len(text) <= limit:
        return text
    room = limit - len(f" (+{len(ids)} more)")
    kept, size = 0, -1
    while kept < len(ids) and size + 1 + len(ids[kept]) <= room:
        size += 1 + len(ids[kept])
        kept += 1
    return " ".join([*ids[:kept], f"(+{len(ids) - kept} more)"])


def _ms(dt: datetime) -> str:
    """CEF timestamps as milliseconds since the epoch (one of the two forms the spec allows)."""
    return str(int(dt.timestamp() * 1000))


def _typed_key(ioc: Ioc) -> str | None:
    """The registry's dictionary key for the value when it fits the key's type and length (else cs1 alone
    carries it; the value always travels in cs1 as well, whole up to its 4,000 characters, so SIEM rules
    can match one field)."""
    cef = mapping(ioc.type, "cef", Cef)
    key, limit = cef.key, cef.max_length
    if not key:
        return None
    if limit == 0:
        try:
            address = ipaddress.ip_address(ioc.value)
        except ValueError:
            return None
        return key if (address.version == 4) == (key == "dst") else None
    return key if 0 < len(ioc.value) <= limit else None


def extension(ioc: Ioc, now: datetime) -> str:
    """The escaped extension of one record, ``rt`` last; empty values (and their labels) are left out.

    Labels, the type and timestamps are ours and need no escaping; only record data goes through it.
    """
    fields: list[str] = []
    key = _typed_key(ioc)
    if key:
        fields.append(f"{key}={ext_escape(ioc.value)}" + (" c6a1Label=Indicator IPv6 address" if key == "c6a1" else ""))
    fields.append(f"cat=ioc/{ext_escape(ioc.type)} cs1Label=Indicator cs1={ext_escape(fit(ioc.value))}")
    custom = ((2, "Feed", fit(ioc.feed_name)), (3, "Source category", fit(ioc.source_category)),
              (4, "Confidence", fit(ioc.confidence)), (6, "Related", related([*ioc.cves, *ioc.techniques])))
    for n, label, raw in custom:
        if raw:  # a label without its value would only confuse a parser's field mapping
            fields.append(f"cs{n}Label={label} cs{n}={ext_escape(raw)}")
    fields.append(f"cs5Label=STIX id cs5={ioc.stix_id}")
    # The lifecycle (store.ioctypes.LIFECYCLE_PLACES): the score at ``now`` and when it falls below the
    # threshold. A score of 0 is left out with its label, as empty values are: strict parsers (cefevent)
    # refuse a zero number, so a line without cn1 scores 0.
    score = decay.score(ioc, now)
    if score:
        fields.append(f"cn1Label=Score cn1={score}")
    fields.append(f"deviceCustomDate1Label=Valid until deviceCustomDate1={_ms(ioc.valid_until)}")
    fields.append(f"start={_ms(ioc.first_seen)} end={_ms(ioc.last_seen)} rt={_ms(ioc.modified)}")
    return " ".join(fields)


@functools.cache
def header(ioc_type: str, confidence: str) -> str:
    """``CEF:0|vendor|product|version|signature id|name|severity|``: fixed per (type, confidence)."""
    parts = (PRODUCT, PRODUCT, DEVICE_VERSION, f"ioc-{ioc_type}", mapping(ioc_type, "cef", Cef).name)
    return f"CEF:{CEF_VERSION}|" + "|".join(map(header_escape, parts)) + f"|{SEVERITIES.get(confidence, 3)}|"


def line(ioc: Ioc, now: datetime) -> str:
    """One CEF line (no syslog header: the forwarder adds its own), newline-terminated."""
    return f"{header(ioc.type, ioc.confidence)}{extension(ioc, now)}\n"


class CefExporter(Exporter):
    """CEF text: one line per IOC, streamed in batches of lines. An empty result is an empty body."""

    format_id: ClassVar[str] = "cef"
    media_type: ClassVar[str] = "text/plain; charset=utf-8"
    extension: ClassVar[str] = "cef.log"
    scope: ClassVar[str] = SCOPE_EXPORTS
    summary: ClassVar[str] = "CEF lines, one per IOC (syslog-ready)"

    def encode(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        for start in range(0, len(iocs), LINES_PER_CHUNK):
            now = decay.clock(ctx.generated_at)
            yield "".join(line(ioc, now) for ioc in iocs[start:start + LINES_PER_CHUNK]).encode()
