"""IOCs of an article: candidates, structural filters, context verdicts, then one record per value.

Values come out as the IOC records spell them (``store.indicators.normalize``). A malicious URL brings
its host and a malicious e-mail address its domain, unless that host is a shared legitimate service
(code hosting, chat, file sharing, webmail, shorteners), where only the full URL or address is an IOC.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ingest.enrich.context import LineContext, Verdict, sentence_of
from ingest.enrich.filters import domain_reason, hash_reason, host_class, ip_reason, looks_like_version, tlds
from ingest.enrich.scan import Candidate, scan_line, url_host
from ingest.enrich.textprep import Document, Line
from store.indicators import detect_type, normalize
from store.ioc_values import fits_dns
from store.ioctypes import REGISTRY, specs
from store.records import ArticleIoc

_MAX_MENTIONS = 8
_CONFIDENCE_RANK = {"high": 3, "medium": 2, "low": 1}
# Registration-restricted zones (RFC 1591 edu/gov/mil/int, and gov/ac/edu/mil under a country code): an
# attacker cannot register a name there, so a plainly written one is the victim's or an institution's.
_INSTITUTIONAL = frozenset({"edu", "gov", "mil", "int"})
_INSTITUTIONAL_SECOND = frozenset({"gov", "edu", "ac", "mil", "gob", "govt", "gouv", "go"})
_SECOND_LEVEL = frozenset({"co", "com", "org", "net", "ac", "gov", "or", "ne"})
# Capitalised names in the text ("Lindqvist Labs", "Halvorsen Bygg"): an organisation the article names. Not a
# part of a host, a path or an address ("HTTPS://Evil-C2.com/Gate"): that is the value, not a name beside it.
_PROPER_NAME = re.compile(r"(?<![\w./@-])[A-Z][A-Za-z0-9&]+(?:[ -][A-Z][A-Za-z0-9&]+){0,3}(?![\w&@/-]|\.[A-Za-z0-9])")


@dataclass(slots=True)
class _Evidence:
    """Every verdict on one normalised value, and whether it was ever written defanged."""

    verdicts: list[Verdict] = field(default_factory=list)
    defanged: bool = False
    order: int = 0


def ioc_order() -> tuple[str, ...]:
    """Order of the IOC list an article carries: the registry's scanned types (the CLI groups by them)."""
    return tuple(spec.name for spec in specs() if isinstance(spec.scan, str))


def _rule(ioc_type: str) -> str:
    """The scan rule of a scanned type ("ip", "hex", "domain", "url", "email")."""
    return str(REGISTRY[ioc_type].scan)


def _structural_reason(candidate: Candidate, line: Line) -> str | None:
    """Why a candidate is no indicator by what it is (see ``filters``), or None."""
    text = line.text
    rule = _rule(candidate.type)
    if candidate.cidr:
        return "cidr"
    if rule == "ip":
        reason = ip_reason(candidate.value)
        if reason is None and candidate.type == "ipv4" and not _defanged(candidate, line):
            if looks_like_version(candidate, text, sentence_of(line, candidate.start)):
                return "version"
        return reason
    if rule == "hex":
        return hash_reason(candidate, text, line.heading)
    if rule == "domain":
        return domain_reason(candidate, text, _defanged(candidate, line))
    if rule == "url":
        return _host_reason(url_host(candidate.value))
    if rule == "email":
        return _host_reason(candidate.value.rpartition("@")[2])
    return None


def _host_reason(host: str) -> str | None:
    """Why a URL host or address domain rules the whole URL or address out, or None."""
    if not host:
        return "no-host"
    try:
        return ip_reason(str(ipaddress.ip_address(host)))
    except ValueError:
        pass
    if host.rsplit(".", 1)[-1].lower() not in tlds() or not fits_dns(host):
        return "not-a-domain"
    role = host_class(host)
    if role in ("documentation", "benign", "dynamic-parent"):
        return role
    return None


def _defanged(candidate: Candidate, line: Line) -> bool:
    """True when the value does not appear as such in the line as written (it was refanged)."""
    return line.raw != line.text and candidate.value not in line.raw


def _defanged_with(candidate: Candidate, context: LineContext, defanged: list[bool], index: int) -> bool:
    """An IPv6 address has no dot to bracket: enumerated with defanged values ("94.232.41[.]108 and
    2a12:bec4::2"), it is presented the way they are."""
    first, last = context.groups[index]
    return candidate.type == "ipv6" and any(defanged[first:last + 1])


def _collect(document: Document) -> dict[tuple[str, str], _Evidence]:
    evidence: dict[tuple[str, str], _Evidence] = {}
    for line in document.lines:
        if line.is_heading and line.section != "ioc":
            continue
        candidates = scan_line(line.text, line.index)
        context = LineContext(line, candidates)
        defanged = [_defanged(candidate, line) for candidate in candidates]
        for index, candidate in enumerate(candidates):
            key = (candidate.type, normalize(candidate.type, candidate.value))
            entry = evidence.get(key)
            if entry is not None and len(entry.verdicts) >= _MAX_MENTIONS:
                continue  # enough evidence on this value; an IOC dump may repeat it thousands of times
            if _structural_reason(candidate, line) is not None:
                continue
            if entry is None:
                entry = evidence[key] = _Evidence(order=len(evidence))
            entry.verdicts.append(context.judge(index))
            entry.defanged = entry.defanged or defanged[index] or _defanged_with(candidate, context, defanged, index)
    return evidence


def institutional(host: str) -> bool:
    """True for names in registration-restricted zones (``westbrook.edu``, ``agency.gov.uk``)."""
    labels = host.lower().rstrip(".").split(".")
    return labels[-1] in _INSTITUTIONAL or (len(labels) >= 3 and len(labels[-1]) == 2
                                            and labels[-2] in _INSTITUTIONAL_SECOND)


def _host_of(ioc_type: str, value: str) -> str:
    if ioc_type == "url":
        return url_host(value)
    return value.rpartition("@")[2] if ioc_type == "email" else value


def proper_names(text: str) -> frozenset[str]:
    """Every capitalised name of the text and each run of its words, lowercased and joined ("lindqvistlabs"
    for "Lindqvist Labs"; "ostaranetworks" for "Ostara Networks Research")."""
    names: set[str] = set()
    for match in _PROPER_NAME.finditer(text):
        words = re.split(r"[ -]", match.group().lower())
        spans = ("".join(words[start:end]) for start in range(len(words)) for end in range(start + 1, len(words) + 1))
        names.update(span for span in spans if len(span) >= 4)
    return frozenset(names)


def registrable_label(host: str) -> str:
    """The label a registrant chose: ``halvorsenbygg`` of ``www.halvorsenbygg.no`` or ``acme.co.uk``."""
    labels = host.lower().rstrip(".").split(".")
    if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in _SECOND_LEVEL:
        return labels[-3]
    return labels[-2] if len(labels) >= 2 else labels[0]


def confidence_of(ioc_type: str, value: str, entry: _Evidence, names: frozenset[str] = frozenset()) -> str | None:
    """The confidence of a value from its mentions, or None when it is not presented as an IOC.

    ``names`` are the organisations the article names: a host spelled as one of them ("Lindqvist Labs
    published its results at lindqvistlabs.com", "Ostara Networks" at ostara-networks.net) is that
    organisation's own site unless the article defangs it or lists it among indicators.
    """
    strongest = max(verdict.strength for verdict in entry.verdicts)
    benign = any(verdict.benign for verdict in entry.verdicts)
    host = _host_of(ioc_type, value)
    if strongest < 3 and not entry.defanged and "." in host \
            and host_class(host) != "shared" and registrable_label(host).replace("-", "") in names:
        return None
    if benign and strongest < 2:
        return None
    if ioc_type in ("domain", "url", "email") and institutional(host) and not (entry.defanged or strongest == 3):
        return None
    if strongest == 0 and ioc_type == "url" and host_class(host) == "shared" and urlsplit(value).path.strip("/"):
        # A file or page on a file-sharing or code-hosting service, in a paragraph about an attack.
        return "low" if any(verdict.paragraph for verdict in entry.verdicts) else None
    if all(verdict.section == "reference" for verdict in entry.verdicts) and not entry.defanged:
        return None
    if strongest == 3 or (strongest == 2 and entry.defanged):
        return "high"
    if strongest == 2 or (strongest == 1 and entry.defanged) or (_rule(ioc_type) == "hex" and not benign):
        return "medium"
    if entry.defanged or (strongest == 1 and ioc_type != "domain"):
        # A plainly written bare domain is most often a vendor, victim or publisher: a cue elsewhere in
        # its sentence is not enough for it, while an address or URL in such a sentence is rarely benign.
        return "low"
    return None


def _derived(ioc_type: str, value: str) -> tuple[str, str] | None:
    """The host IOC a malicious URL or address brings along, or None (shared services bring none)."""
    host = url_host(value) if ioc_type == "url" else value.rpartition("@")[2] if ioc_type == "email" else ""
    if not host or _host_reason(host) is not None or host_class(host) == "shared":
        return None
    kind = detect_type(host)
    if kind is None or REGISTRY[kind].scan not in ("ip", "domain"):
        return None
    return kind, normalize(kind, host)


def extract_iocs(document: Document) -> list[ArticleIoc]:
    """The IOCs of an article, one per (type, value), in the order of ``ioc_order()`` then of appearance."""
    found: dict[tuple[str, str], tuple[str, int]] = {}
    names = proper_names(document.text)
    evidence = _collect(document)
    for (ioc_type, value), entry in sorted(evidence.items(), key=lambda item: item[1].order):
        confidence = confidence_of(ioc_type, value, entry, names)
        if confidence is None or detect_type(value) != ioc_type:
            continue
        _keep(found, (ioc_type, value), confidence, entry.order)
        derived = _derived(ioc_type, value)
        if derived is not None:
            _keep(found, derived, confidence, entry.order)
    _keep_subdomains(found, evidence)
    order = ioc_order()
    ordered = sorted(found.items(), key=lambda item: (order.index(item[0][0]), item[1][1]))
    return [ArticleIoc(ioc_type, value, confidence) for (ioc_type, value), (confidence, _) in ordered]


def _keep_subdomains(found: dict[tuple[str, str], tuple[str, int]], evidence: dict[tuple[str, str], _Evidence]) -> None:
    """A name under a domain the article presents as malicious belongs to the same infrastructure, even where
    it is written plainly (a DNS log line naming ``c2f1.t.tunnel-domain.com``): kept with low confidence."""
    malicious = {value for kind, value in found if kind == "domain" and (kind, value) in evidence}
    for (ioc_type, value), entry in evidence.items():
        if ioc_type != "domain" or (ioc_type, value) in found or detect_type(value) != "domain":
            continue
        labels = value.split(".")
        if any(".".join(labels[start:]) in malicious for start in range(1, len(labels) - 1)):
            _keep(found, (ioc_type, value), "low", entry.order)


def _keep(found: dict[tuple[str, str], tuple[str, int]], key: tuple[str, str], confidence: str, order: int) -> None:
    previous = found.get(key)
    if previous is None or _CONFIDENCE_RANK[confidence] > _CONFIDENCE_RANK[previous[0]]:
        found[key] = (confidence, previous[1] if previous else order)
