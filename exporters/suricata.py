"""Suricata rules: one rule per value and match (the registry's ``Suricata.matches``).

Addresses are matched in the rule header (``alert ip $HOME_NET any -> ADDRESS any``, with a threshold of
one alert per source an hour, as IP reputation rules do); domains in ``dns.query``, ``tls.sni`` and
``http.host`` (the name and its subdomains: ``dotprefix; content:".name"; endswith``); URLs as
``http.host`` plus the exact ``http.uri`` (path and query). Hash, e-mail, CVE and technique records have
no rule form and are counted in the ``#`` header.

Identity: a rule's ``sid`` is derived from its buffer and value (SHA-256, reduced into the range
``SID_FIRST``..``SID_LAST``, a billion sids above the Snort/Talos, local (1,000,000-1,999,999) and
Emerging Threats (2,000,000-2,999,999) allocations), so the same IOC keeps its sid across builds and an
operator's suppressions and thresholds keep working. Two values whose hashes land on one sid within a
build are told apart deterministically: in order of (sid, buffer, value), a later one takes the next free
sid. Every rule says ``rev:1``: a sid always means the same match.

Escaping (Suricata rules format, "content"): contents are written with every character outside a safe set
as ``|hex|`` bytes, so a value can never close the content, the option or the rule; messages name an
address or an escaped host only (``evil .example .net``, the Emerging Threats style that also keeps the
name from being a link). ``metadata`` carries the IOC's confidence and source (feed), its dates and the
ET metadata keys that help a SOC decide where to deploy it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from typing import ClassVar
from urllib.parse import urlsplit

from config.tiers import SCOPE_EXPORTS
from exporters.base import ExportContext, Exporter, chunked, unique_records
from store.ioc_values import ip_version, is_domain
from store.ioctypes import Suricata, SuricataMatch, mapping, supported
from store.records import Ioc

SID_FIRST = 1_000_000_000
SID_LAST = 1_999_999_999
CLASSTYPE = "bad-unknown"  # classification.config: "Potentially Bad Traffic", priority 2
SEVERITY: dict[str, str] = {"high": "Major", "medium": "Minor", "low": "Informational"}
# Bytes written as themselves inside a content; everything else is |hex| (Suricata-check S120 lists the
# characters rule writers should never leave bare).
_SAFE = re.compile(r"[A-Za-z0-9._~\-=&?%,+!*@]")
_META_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")
_MSG_UNSAFE = re.compile(r"[^A-Za-z0-9_.:\-\[\]]")
_HTTP_SCHEMES = ("http", "https", "hxxp", "hxxps")
SKIPPED_NOTE = "record(s) omitted: no valid host name or HTTP URL to match"


def content(text: str) -> str:
    """A content string matching ``text``'s UTF-8 bytes exactly."""
    out: list[str] = []
    for char in text:
        out.append(char if _SAFE.fullmatch(char) else "|" + char.encode().hex(" ") + "|")
    return "".join(out).replace("||", " ")


def meta(text: str) -> str:
    """A metadata value: one word of safe characters (a comma or semicolon would end the option)."""
    return _META_UNSAFE.sub("_", text).strip("_") or "unknown"


def escaped_host(host: str) -> str:
    """``evil.example.net`` as ``evil .example .net`` (Emerging Threats style for names in messages); any
    character a message cannot hold bare (quote, semicolon, backslash...) becomes ``_``."""
    return _MSG_UNSAFE.sub("_", host).replace(".", " .")


def sid_of(buffer: str, value: str) -> int:
    digest = hashlib.sha256(f"{buffer}\x00{value}".encode()).digest()
    return SID_FIRST + int.from_bytes(digest[:8], "big") % (SID_LAST - SID_FIRST + 1)


def assign_sids(keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """Each (buffer, value) its hashed sid; a collision moves the later key (by sid, then key) up by one."""
    taken: set[int] = set()
    sids: dict[tuple[str, str], int] = {}
    for home, key in sorted((sid_of(*key), key) for key in set(keys)):
        sid = home
        while sid in taken:
            sid = SID_FIRST if sid == SID_LAST else sid + 1
        taken.add(sid)
        sids[key] = sid
    return sids


def _url_parts(url: str) -> tuple[str, str] | None:
    """(host, path and query) of an HTTP URL, or None when it is none."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme not in _HTTP_SCHEMES or not host:
        return None
    return host, (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


Detection = tuple[str, str, str]  # (destination address, detection options, what the message names)


def _detection(match: SuricataMatch, ioc: Ioc) -> Detection | None:
    """How one match of the registry finds the record's value; None when the value has no such form."""
    if not match.buffer:
        return _address(ioc.value)
    flow = "" if match.protocol == "dns" else "flow:established,to_server; "  # DNS is mostly UDP: no flow
    if match.buffer == "http.uri":
        return _url(flow, ioc.value)
    return _name(match, flow, ioc.value)


def _address(value: str) -> Detection | None:
    """In the header; one alert per source an hour, as IP reputation rules do (every packet would match)."""
    if ip_version(value) is None or value.startswith("["):
        return None
    return value, "threshold:type limit, track by_src, count 1, seconds 3600; ", value


def _url(flow: str, value: str) -> Detection | None:
    """The exact path and query in ``http.uri`` (the fast pattern), on the exact host."""
    parts = _url_parts(value)
    if parts is None:
        return None
    host, uri = parts
    options = (
        f'{flow}http.uri; content:"{content(uri)}"; startswith; endswith; fast_pattern; '
        f'http.host; content:"{content(host)}"; startswith; endswith; '
    )
    return "$EXTERNAL_NET", options, f"({escaped_host(host)})"


def _name(match: SuricataMatch, flow: str, domain: str) -> Detection | None:
    """The name or any subdomain of it (``dotprefix`` adds the dot the content starts with)."""
    if not is_domain(domain):
        return None
    nocase = "" if match.buffer == "http.host" else "nocase; "  # Suricata lower-cases http.host itself
    destination = "any" if match.protocol == "dns" else "$EXTERNAL_NET"
    options = f'{flow}{match.buffer}; dotprefix; content:".{content(domain)}"; endswith; {nocase}'
    return destination, options, f"({escaped_host(domain)})"


def rule(match: SuricataMatch, ioc: Ioc, sid: int, detection: Detection) -> str:
    destination, options, named = detection
    label = match.protocol.upper()
    return (
        f'alert {match.protocol} $HOME_NET any -> {destination} any (msg:"CTIWIRE {label} {match.seen} '
        f'{named}"; {options}classtype:{CLASSTYPE}; target:src_ip; sid:{sid}; rev:1; {_metadata(ioc)})\n'
    )


def _metadata(ioc: Ioc) -> str:
    return (
        f"metadata:confidence {ioc.confidence.capitalize()}, source {meta(ioc.feed_name)}, "
        f"created_at {ioc.first_seen:%Y_%m_%d}, updated_at {max(ioc.modified, ioc.first_seen):%Y_%m_%d}, "
        f"signature_severity {SEVERITY.get(ioc.confidence, 'Informational')}, attack_target Client_Endpoint, "
        "deployment Perimeter, performance_impact Low;"
    )


def planned(iocs: Sequence[Ioc]) -> tuple[list[tuple[SuricataMatch, Ioc, Detection]], int]:
    """Every (match, record, detection) to write, by type and value; and how many records had none."""
    chosen = sorted((i for i in unique_records(iocs) if supported(i.type, "suricata")), key=lambda i: (i.type, i.value))
    plan, unmatched = [], 0
    for ioc in chosen:
        found = [(m, ioc, d) for m in mapping(ioc.type, "suricata", Suricata).matches if (d := _detection(m, ioc))]
        plan.extend(found)
        unmatched += not found
    return plan, unmatched


class SuricataExporter(Exporter):
    """Suricata rules, one per line under ``#`` comments; an empty result is the header alone."""

    format_id: ClassVar[str] = "suricata"
    media_type: ClassVar[str] = "text/plain; charset=utf-8"
    extension: ClassVar[str] = "suricata.rules"
    scope: ClassVar[str] = SCOPE_EXPORTS
    summary: ClassVar[str] = "Suricata rules for reported addresses, domains and URLs"

    def encode(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        plan, unmatched = planned(iocs)
        notes = [f"{unmatched} {SKIPPED_NOTE}"] if unmatched else []
        header = ctx.header_lines(
            f"Suricata rules (sids {SID_FIRST}-{SID_LAST}, derived from each value)", iocs, "suricata", notes
        )
        yield "".join(f"# {line}\n" for line in header).encode()
        sids = assign_sids([(m.buffer or m.protocol, i.value) for m, i, _ in plan])
        yield from chunked(rule(m, i, sids[(m.buffer or m.protocol, i.value)], d).encode() for m, i, d in plan)
