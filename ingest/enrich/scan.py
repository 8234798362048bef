"""Candidate indicators in a refanged line: every string shaped like a URL, address, domain or hash.

Scanning is shape only; whether a candidate is an IOC is decided later (``filters`` for what it is,
``context`` for how the article presents it). URLs are found first and masked, then e-mail addresses,
so that a URL's host or an address's domain is not found a second time as a bare domain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from store.ioc_values import is_ipv4, is_ipv6
from store.ioctypes import specs

# Control and format characters end a URL as white space does (RFC 3986 allows neither unencoded): a NUL
# left by a conversion, or the direction marks a right-to-left page puts around a left-to-right value.
_NOT_IN_URL = ("\x00-\x20\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u180e\u200b-\u200f\u202a-\u202e"
               "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb")
_URL = re.compile(rf"\b(?:https?|ftp)://[^\s<>\"'`{{}}\\^{_NOT_IN_URL}]+", re.IGNORECASE)
_EMAIL = re.compile(r"(?<![\w.+%-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
                    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z][A-Za-z0-9-]{1,62}(?![\w-]|\.[A-Za-z0-9])")
_IPV4 = re.compile(r"(?<![\w.])((?:\d{1,3}\.){3}\d{1,3})(/\d{1,2}(?!\d))?(?:\:(\d{1,5}))?(?!\.?\d)(?![\w-])")
_IPV6 = re.compile(r"(?<![\w:.])\[?((?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|:|(?:\d{1,3}\.){3}\d{1,3}))\]?"
                   r"(/\d{1,3}(?!\d))?(?![\w:])")
_DOMAIN = re.compile(r"(?<![\w@.-])((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
                     r"(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{2,59}))(?![\w-]|\.[A-Za-z0-9])")
# A hex run that is a label of a host name ("4d1f...3c.cdn.example.net", a DNS-tunnel query) is not a digest.
_HEX = re.compile(r"(?<![0-9A-Za-z.])([0-9A-Fa-f]{128}|[0-9A-Fa-f]{64}|[0-9A-Fa-f]{40}|[0-9A-Fa-f]{32})"
                  r"(?![0-9A-Za-z]|\.[0-9A-Za-z])")
# The rules scan_line runs, by the names the registry's ``scan`` field uses (store.ioctypes).
RULES: frozenset[str] = frozenset({"url", "email", "ip", "hex", "domain"})
_TRAILING = ".,;:!?'\"*>"
_PAIRS = {")": "(", "]": "[", "}": "{"}


@dataclass(frozen=True, slots=True)
class Candidate:
    """A value shaped like an indicator, where it was found, and the shape details filters need."""

    type: str  # a registered type whose ``scan`` rule is one of RULES
    value: str  # as found in the refanged text (not yet normalised)
    line: int
    start: int
    end: int
    cidr: bool = False  # written with a prefix length: a network, not a host


def trim_url(url: str) -> str:
    """A URL without the punctuation that ends the sentence around it; balanced brackets are kept."""
    while url:
        last = url[-1]
        if last in _TRAILING:
            url = url[:-1]
        elif last in _PAIRS and url.count(_PAIRS[last]) < url.count(last):
            url = url[:-1]
        else:
            break
    return url


def url_host(url: str) -> str:
    """The host of a URL (lowercase, no port, IPv6 without brackets), or "" when it has none."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".")


def hex_types() -> dict[int, str]:
    """Digest length -> type, for the registry's types of the ``hex`` rule (the earliest registered wins)."""
    found: dict[int, str] = {}
    for spec in specs():
        if spec.scan == "hex":
            found.setdefault(spec.hex_length, spec.name)
    return found


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def field_delimiter(text: str) -> str | None:
    """The field delimiter of a CSV-like line ("url,hxxps://a/b.msix,MSIX payload", "ip;date;role"): a comma
    or semicolon written at least twice and never followed by a space, as prose writes them; else None."""
    for delimiter in ",;":
        if text.count(delimiter) >= 2 and f"{delimiter} " not in text:
            return delimiter
    return None


def _unbracketed(url: str) -> str:
    """A URL whose host kept a bracket of its defang ("hxxp://[evil[.]com]/a", "http://evil.com]/b") without
    them; brackets that hold an IPv6 literal (RFC 3986 section 3.2.2), which urlsplit reads, stay."""
    if url_host(url):
        return url
    scheme, separator, rest = url.partition("://")
    end = next((index for index, char in enumerate(rest) if char in "/?#"), len(rest))
    return scheme + separator + rest[:end].replace("[", "").replace("]", "") + rest[end:]


def _urls(text: str, line: int) -> tuple[list[Candidate], str]:
    found = []
    delimiter = field_delimiter(text)
    for match in _URL.finditer(text):
        written = trim_url(match.group().split(delimiter)[0] if delimiter else match.group())
        value = _unbracketed(written)
        if "://" in value and url_host(value):  # no host, or one urlsplit cannot read ("http://a]b/")
            found.append(Candidate("url", value, line, match.start(), match.start() + len(written)))
            text = _mask(text, match.start(), match.start() + len(written))
    return found, text


def _emails(text: str, line: int) -> tuple[list[Candidate], str]:
    found = []
    for match in _EMAIL.finditer(text):
        found.append(Candidate("email", match.group(), line, match.start(), match.end()))
        text = _mask(text, match.start(), match.end())
    return found, text


def _network(prefix: str | None, single: str) -> bool:
    """Written with a prefix length that spans more than one address (``single``, a /32 or /128, is the host
    itself)."""
    return bool(prefix) and prefix != single


def _ips(text: str, line: int) -> tuple[list[Candidate], str]:
    found = []
    # A version ("18.0.0.324"), a zero-padded placeholder ("000.000.000.000") or a run of hex and colons is
    # only shaped like an address: the registry's own detection decides.
    for match in _IPV4.finditer(text):
        if not is_ipv4(match.group(1)):
            continue
        found.append(Candidate("ipv4", match.group(1), line, match.start(), match.end(),
                               cidr=_network(match.group(2), "/32")))
        text = _mask(text, match.start(), match.end())
    for match in _IPV6.finditer(text):
        if not is_ipv6(match.group(1)):
            continue
        found.append(Candidate("ipv6", match.group(1), line, match.start(), match.end(),
                               cidr=_network(match.group(2), "/128")))
        text = _mask(text, match.start(), match.end())
    return found, text


def scan_line(text: str, line: int) -> list[Candidate]:
    """Every candidate of one refanged line, in order of position."""
    urls, text = _urls(text, line)
    emails, text = _emails(text, line)
    ips, text = _ips(text, line)
    digests = hex_types()
    hashes = [Candidate(digests[len(m.group(1))], m.group(1), line, m.start(), m.end())
              for m in _HEX.finditer(text) if len(m.group(1)) in digests]
    domains = [Candidate("domain", m.group(1), line, m.start(1), m.end(1)) for m in _DOMAIN.finditer(text)]
    return sorted([*urls, *emails, *ips, *hashes, *domains], key=lambda candidate: candidate.start)
