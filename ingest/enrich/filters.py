"""What a candidate is, regardless of how it is presented: the structural "not IOCs".

Each check answers with a reason (a short slug, handy in tests and when tuning by class) or None:
documentation names and ranges, private/loopback/link-local and other non-global addresses, CIDR
networks, public resolvers, version strings shaped like IPs, file and product names with dots, app
bundle identifiers, parent zones of dynamic-DNS and tunnel services, hex strings that are not hashes.
"""

from __future__ import annotations

import ipaddress
import re
from functools import cache

from ingest.enrich.resources import context_cues, cue_regex, domain_in, word_list, yaml_data
from ingest.enrich.scan import Candidate

# RFC 2606 / RFC 6761 reserved names, and names that only resolve inside a network.
_RESERVED_TLDS = frozenset({"test", "example", "invalid", "localhost", "local", "internal", "lan", "corp", "home",
                            "intranet", "localdomain", "arpa"})
_DOCUMENTATION_DOMAINS = frozenset({"example.com", "example.net", "example.org", "example.edu"})
# RFC 5737 (IPv4) and RFC 3849 (IPv6) documentation ranges; ``is_global`` covers the rest.
_DOCUMENTATION_NETS = tuple(ipaddress.ip_network(net) for net in
                            ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32", "3fff::/20"))
# Amazon S3's regional and dual-stack endpoints (s3.us-east-1.amazonaws.com, s3-eu-west-1.amazonaws.com,
# bucket.s3.dualstack.eu-west-1.amazonaws.com): cloud storage, a shared service like s3.amazonaws.com.
_S3_ENDPOINT = re.compile(r"(?:^|\.)s3[.-](?:[a-z0-9-]+\.)*amazonaws\.com$")
_BUNDLE_PREFIXES = frozenset({"com", "org", "net", "edu", "gov", "mil", "io", "de", "fr", "ru", "cn", "jp", "uk",
                              "us", "ch", "nl", "it", "es", "br", "in", "kr", "tw", "co", "me", "app", "dev"})
# A version on the other side of a range or list word. Dotted quads count only across "through": IP
# addresses are listed with "and" and "to" ("from 45.1.2.3 to 91.2.3.4") as often as versions are.
_VERSION = r"v?\d+(?:\.\d+){1,2}[a-z]?"
_QUAD = r"\d+(?:\.\d+){3}"
# What follows a field name in a query (a host is followed by a port's digits, not by a value or operator).
_FIELD_NAME = re.compile(r"\s*(?::\s*[\"'(\[*]|:\s*[A-Za-z_]|==|!=|=~|\s+(?:in|IN|like|LIKE|contains)\s*[\"'(])")
_RANGE_BEFORE = re.compile(rf"(?<![\w.])(?:{_VERSION},?\s*(?:through|thru|to|and|or|until|-|\u2013)|"
                           rf"{_QUAD}\s*(?:through|thru|until)|"
                           rf"(?:versions?|builds?|firmware|releases?)\s+{_QUAD}\s*(?:to|and|or|-|\u2013))\s*$",
                           re.IGNORECASE)
_RANGE_AFTER = re.compile(rf"^,?\s*(?:(?:through|thru|to|and|or|until|-|\u2013)\s*{_VERSION}(?![\w.]*\d)|"
                          rf"(?:through|thru|until)\s*{_QUAD})", re.IGNORECASE)
# A product named right before the number in a sentence ("drops Mimikatz 2.2.0.20", "the trojanized
# 3CXDesktopApp 18.12.107.0", "Fortinet FortiOS 7.2.4.1 devices"): a name with a capital and a small letter
# (an acronym such as C2 or IP names a role), after another word, before a small first part (a major
# version; an address after a name, "Cobalt Strike 139.60.161.167" in a list of rules, starts higher).
_PRODUCT_BEFORE = re.compile(r"\S\s+[0-9]*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*\s$")
_MAX_MAJOR = 40
_PROSE_WORDS = 5  # words in the sentence for it to be prose rather than a list's line
_WORD = re.compile(r"[A-Za-z]{2,}")
# What a writer puts where a host is withheld: it names no host, like a documentation name.
_EXES = re.compile(r"x+")
_WITHHELD = frozenset({"redacted", "removed", "censored", "sanitized", "withheld"})


@cache
def _version_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    data = yaml_data("ioc_context.yaml")
    before = cue_regex(data["version_before"], anchor_end=True)
    after = re.compile(r"^\s*(?:" + "|".join(data["version_after"]) + ")", re.IGNORECASE)
    return before, after


def tlds() -> frozenset[str]:
    return word_list("tlds.txt")


def documentation_ip(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return any(address in net for net in _DOCUMENTATION_NETS if net.version == address.version)


def ip_reason(value: str) -> str | None:
    """Why an IP address is not an indicator whatever the context, or None."""
    try:
        address = ipaddress.ip_address(value.strip("[]"))
    except ValueError:
        return "invalid"
    if documentation_ip(address):
        return "documentation"
    if address.is_private or address.is_loopback or address.is_link_local:
        return "private"
    if not address.is_global or address.is_multicast:
        return "reserved"
    if str(address) in word_list("public_resolvers.txt"):
        return "public-resolver"
    return None


def looks_like_version(candidate: Candidate, text: str, sentence: tuple[int, int]) -> bool:
    """True when an IP-shaped value is a version or build number by its wording.

    A version word right before it ("version 10.2.0.1", "fixed in 7.0.4.1") or after it ("and
    earlier"), or a sentence about versions that lists other dotted version numbers beside it.
    """
    before, after = _version_patterns()
    left = text[max(sentence[0], candidate.start - 30):candidate.start]
    right = text[candidate.end:candidate.end + 40]
    if before.search(left) or after.match(right):
        return True
    # One end of a range or list of versions: "7.0.1 through 7.2.4.1", "3.0.0.0 to 3.0.15.9".
    return bool(_RANGE_BEFORE.search(left) or _RANGE_AFTER.match(right)) or _after_product(candidate, text, sentence)


def _after_product(candidate: Candidate, text: str, sentence: tuple[int, int]) -> bool:
    """A small dotted quad right after a product's name, in a sentence of prose (not a list's line)."""
    if int(candidate.value.split(".")[0]) > _MAX_MAJOR:
        return False
    left = text[max(sentence[0], candidate.start - 60):candidate.start]
    return bool(_PRODUCT_BEFORE.search(left)) and len(_WORD.findall(text[sentence[0]:sentence[1]])) >= _PROSE_WORDS


def _placeholder(labels: list[str]) -> bool:
    """A name standing for a withheld one: "xxx.xxx.xxx.xxx" (.xxx is a real TLD), "redacted.com"."""
    return all(_EXES.fullmatch(label) for label in labels) or (len(labels) == 2 and labels[0] in _WITHHELD)


def host_class(host: str) -> str | None:
    """Role of a host by its name: documentation, shared service, benign, dynamic parent zone, or None.

    The most specific list wins: ``teams.microsoft.com`` is a shared service even though it sits under
    the benign ``microsoft.com``; ``evil.duckdns.org`` is under a dynamic zone but is not its parent.
    """
    host = host.lower().rstrip(".")
    labels = host.split(".")
    if labels[-1] in _RESERVED_TLDS or domain_in(host, _DOCUMENTATION_DOMAINS) or _placeholder(labels):
        return "documentation"
    if _S3_ENDPOINT.search(host):
        return "shared"
    matches = [(zone, kind) for kind, name in (("shared", "shared_services.txt"), ("benign", "benign_domains.txt"),
                                               ("dynamic", "dynamic_zones.txt"))
               if (zone := domain_in(host, word_list(name)))]
    if not matches:
        return None
    zone, kind = max(matches, key=lambda match: len(match[0]))
    if kind == "dynamic":
        return "dynamic-parent" if zone == host else None
    return kind


def domain_reason(candidate: Candidate, text: str, defanged: bool) -> str | None:
    """Why a bare domain candidate is not a domain indicator whatever the context, or None."""
    value = candidate.value.rstrip(".")
    labels = value.split(".")
    tld = labels[-1].lower()
    if tld not in tlds():
        return "not-a-domain"
    if role := host_class(value):
        return role
    if defanged:
        return None  # a writer who defangs a name means a host, whatever it looks like
    if tld in word_list("file_extension_tlds.txt") or _file_context(text, candidate):
        return "file-name"
    if any(ch.isupper() for ch in value):
        return "proper-name"  # ASP.NET, Socket.IO, Booking.com, "attack.It": names and run-on words
    if _FIELD_NAME.match(text, candidate.end):
        return "field-name"  # process.name:"x", user.name == "y": a query's field, not a host
    if len(labels) >= 3 and labels[0].lower() in _BUNDLE_PREFIXES or _bundle_context(text, candidate):
        return "bundle-id"
    return None


def _file_context(text: str, candidate: Candidate) -> bool:
    # A dotted name followed by a path separator or written as a path component is a file name.
    before = text[max(0, candidate.start - 1):candidate.start]
    return before in ("\\", "/", "%")


@cache
def _bundle_pattern() -> re.Pattern[str]:
    return cue_regex(yaml_data("ioc_context.yaml")["bundle"], anchor_end=True)


def _bundle_context(text: str, candidate: Candidate) -> bool:
    return bool(_bundle_pattern().search(text[max(0, candidate.start - 30):candidate.start]))


def hash_reason(candidate: Candidate, text: str, heading: str) -> str | None:
    """Why a hex string is not a file hash (commit ids, JA3/JARM, keys, wallets), or None.

    The nearest cue on the line to the left decides, then the nearest one to the right, then the
    heading: "SHA256 of the sample" beats a "fingerprint" farther away.
    """
    if candidate.value.isdigit() or candidate.value.isalpha():
        return "not-hex-digest"
    left = text[:candidate.start]
    right = text[candidate.end:candidate.end + 40]
    for window, nearest in ((left, _last_cue), (right, _first_cue), (heading, _last_cue)):
        found = nearest(window)
        if found is not None:
            return None if found == "hash" else "not-a-file-hash"
    return None


def _last_cue(window: str) -> str | None:
    best: tuple[int, str] | None = None
    for kind in ("hash", "non_hash"):  # a tie goes to non_hash: "JA3 hash" ends where "hash" does
        for match in context_cues(kind).finditer(window):
            if best is None or match.end() > best[0] or (kind == "non_hash" and match.end() == best[0]):
                best = (match.end(), kind)
    return best[1] if best else None


def _first_cue(window: str) -> str | None:
    best: tuple[int, str] | None = None
    for kind in ("hash", "non_hash"):
        match = context_cues(kind).search(window)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), kind)
    return best[1] if best else None
