"""Sigma rules for IOC records: a multi-document YAML stream (Sigma specification 2.0).

Records are grouped by (log source, confidence) so one rule carries many values (at most
``VALUES_PER_RULE``); each type's log source and field are in the registry (``store.ioctypes``): network
connections to IPs, DNS queries for domains, proxy requests for URLs, and Sysmon-style ``Hashes`` of
created processes for MD5/SHA-1/SHA-256. SHA-512 (Sysmon does not compute it), e-mail senders, CVE ids
and ATT&CK technique records have no Sigma log source to match in: they are left out, and a comment line
at the top of the stream says how many and why (the techniques an indicator is reported with become the
rule's ``attack.tNNNN`` tags). An empty result is a stream of comments only, which parses as zero rules.

The YAML is written by hand, not dumped: every scalar that carries data is a double-quoted string made by
a JSON encoder (YAML 1.2 double-quoted strings are a superset of JSON strings), with the few characters a
YAML reader would fold or reject escaped as well, so a hostile value can never open a new key or document.
Inside that quoting, values are Sigma-escaped (``\\``, ``*``, ``?``), so they match literally. Rule ids
are UUIDv5 of (log source, confidence, part): a later export of the same group is a revision of the same
rule, which is what a Sigma id means.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import ClassVar

import orjson

from config.tiers import SCOPE_EXPORTS
from exporters.base import PRODUCT, ExportContext, Exporter, stable_uuid, unique_records
from store.ioctypes import Sigma, SigmaSource, mapping, skipped_note, specs, supported
from store.records import Ioc, iso

VALUES_PER_RULE = 500
MAX_REFERENCES = 10
MAX_FEEDS_NAMED = 10
LEVELS: dict[str, str] = {"high": "high", "medium": "medium", "low": "low"}
CONFIDENCE_ORDER = ("high", "medium", "low")
_TECHNIQUE = re.compile(r"^T\d{4}(?:\.\d{3})?$")
_CVE = re.compile(r"^CVE-(\d+-\d+)$")
# Characters a YAML reader rejects (outside its printable set) or folds as line breaks inside quotes.
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_SIGMA_SPECIAL = str.maketrans({"\\": "\\\\", "*": "\\*", "?": "\\?"})


FALSE_POSITIVES = ["Shared hosting, CDN or sinkholed infrastructure reused by legitimate services",
                   "Security tooling and analysts resolving or fetching the indicator"]


def quote(text: str) -> str:
    """A YAML double-quoted scalar holding exactly ``text`` (JSON escaping plus YAML's extra unsafe set)."""
    quoted = orjson.dumps(text).decode()
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


def sigma_escape(value: str) -> str:
    """A Sigma string that matches ``value`` literally (backslash, ``*`` and ``?`` escaped)."""
    return value.translate(_SIGMA_SPECIAL)


def tags(iocs: Sequence[Ioc]) -> list[str]:
    """ATT&CK technique tags (attack.t1566.001) and CVE tags (cve.2024-1234), well-formed ids only."""
    techniques = sorted({t.upper() for i in iocs for t in i.techniques if _TECHNIQUE.match(t.upper())})
    cves = sorted({m.group(1) for i in iocs for c in i.cves if (m := _CVE.match(c.upper()))})
    return [f"attack.{t.lower()}" for t in techniques] + [f"cve.{c}" for c in cves] + ["detection.emerging-threats"]


def _references(iocs: Sequence[Ioc], ctx: ExportContext) -> list[str]:
    urls = dict.fromkeys(ref.url for ioc in iocs for ref in ctx.refs(ioc) if ref.url)
    return list(urls)[:MAX_REFERENCES]


def _description(kind: SigmaSource, iocs: Sequence[Ioc], ctx: ExportContext) -> str:
    feeds = list(dict.fromkeys(i.feed_name for i in iocs))
    named = ", ".join(feeds[:MAX_FEEDS_NAMED]) + (f" and {len(feeds) - MAX_FEEDS_NAMED} more"
                                                  if len(feeds) > MAX_FEEDS_NAMED else "")
    return (f"{kind.title}: {len(iocs)} indicator(s) first seen or updated from {ctx.range_text} "
            f"({ctx.tier} tier), reported by: {named}.")


def _block(key: str, items: Sequence[str], indent: str = "") -> str:
    return f"{indent}{key}:\n" + "".join(f"{indent}  - {quote(item)}\n" for item in items)


def rule(kind: SigmaSource, confidence: str, part: int, parts: int, iocs: Sequence[Ioc], ctx: ExportContext) -> str:
    """One Sigma rule document (without the ``---`` separator)."""
    created = min(i.first_seen for i in iocs).date().isoformat()
    modified = max(max(i.modified, i.first_seen) for i in iocs).date().isoformat()
    logsource = f"  category: {kind.category}\n" + (f"  product: {kind.product}\n" if kind.product else "")
    refs = _references(iocs, ctx)
    return "".join([
        f"title: {quote(f'{PRODUCT}: {kind.title} ({confidence} confidence, part {part} of {parts})')}\n",
        f"id: {stable_uuid('sigma-rule', kind.key, confidence, str(part))}\n",
        "status: experimental\n",
        f"description: {quote(_description(kind, iocs, ctx))}\n",
        _block("references", refs) if refs else "",
        f"author: {PRODUCT}\n",
        f"date: {quote(created)}\n",
        f"modified: {quote(modified)}\n" if modified > created else "",
        _block("tags", tags(iocs)),
        "logsource:\n", logsource,
        "detection:\n  selection:\n",
        _block(kind.field, [sigma_escape(mapping(i.type, "sigma", Sigma).prefix + i.value) for i in iocs], "    "),
        "  condition: selection\n",
        _block("falsepositives", FALSE_POSITIVES),
        f"level: {LEVELS.get(confidence, 'low')}\n",
    ])


def sources() -> dict[SigmaSource, tuple[str, ...]]:
    """Each log source of the registry, in registration order, with the types matched in it."""
    found: dict[SigmaSource, tuple[str, ...]] = {}
    for spec in specs():
        if isinstance(spec.sigma, Sigma):
            found[spec.sigma.source] = (*found.get(spec.sigma.source, ()), spec.name)
    return found


def groups(iocs: Sequence[Ioc]) -> Iterator[tuple[SigmaSource, str, list[Ioc]]]:
    """(kind, confidence, records sorted by value): sorting keeps each part's membership stable between builds."""
    records = [i for i in unique_records(iocs) if supported(i.type, "sigma")]
    for kind, types in sources().items():
        for confidence in CONFIDENCE_ORDER:
            chosen = sorted((i for i in records if i.type in types and i.confidence == confidence),
                            key=lambda i: (i.type, i.value))
            if chosen:
                yield kind, confidence, chosen


class SigmaExporter(Exporter):
    """Sigma rules as one YAML stream, one rule per yielded chunk (each at most ``VALUES_PER_RULE`` values)."""

    format_id: ClassVar[str] = "sigma"
    media_type: ClassVar[str] = "application/yaml"
    extension: ClassVar[str] = "sigma.yml"
    scope: ClassVar[str] = SCOPE_EXPORTS
    summary: ClassVar[str] = "Sigma rules, a multi-document YAML stream"

    def encode(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        yield (f"# {PRODUCT} Sigma rules for IOCs first seen or updated from {ctx.range_text}\n"
               f"# generated {iso(ctx.generated_at)}; an empty stream means no matching indicators\n"
               + "".join(f"# {line}\n" for line in skipped_note([i.type for i in iocs], "sigma"))).encode()
        first = True
        for kind, confidence, records in groups(iocs):
            parts = (len(records) + VALUES_PER_RULE - 1) // VALUES_PER_RULE
            for part in range(parts):
                chunk = records[part * VALUES_PER_RULE:(part + 1) * VALUES_PER_RULE]
                body = rule(kind, confidence, part + 1, parts, chunk, ctx)
                yield ((b"" if first else b"---\n") + body.encode())
                first = False
