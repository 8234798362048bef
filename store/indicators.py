"""One indicator, one spelling: refanging, type detection and normalisation (issue 8, "Records").

Every layer that meets an indicator value (the extractor in ingest/, the search and lookup handlers,
the record merge) goes through these functions, so ``evil[.]com``, ``EVIL.com`` and ``evil.com.`` are
one record, and an IPv6 address has one canonical text (RFC 5952, as ``ipaddress`` prints it).
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit, urlunsplit

# Defanging conventions seen in advisories and vendor reports: hxxp, [.] (.) {.} [dot], [@] [at], [:].
_DEFANG_SUBS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bh(?:xx|XX|\[xx\]|\[XX\]|\*\*)p(s?)(?=\s*(?:\[:\]|:|\[://\]))", re.IGNORECASE), r"http\1"),
    (re.compile(r"\bfxp(?=\s*(?:\[:\]|:))", re.IGNORECASE), "ftp"),
    (re.compile(r"\[://\]"), "://"),
    (re.compile(r"\[:\]|\(:\)"), ":"),
    (re.compile(r"\s?(?:\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\)|\{dot\}|\[d\])\s?", re.IGNORECASE), "."),
    (re.compile(r"\s?(?:\[@\]|\(@\)|\{@\}|\[at\]|\(at\)|\{at\})\s?", re.IGNORECASE), "@"),
    (re.compile(r"\[/\]"), "/"),
    # Half of a bracket pair lost in copying ("evil.]com", "evil[.com"): still the defanged dot.
    (re.compile(r"(?<=\w)(?:\[\.|\.\])(?=\w)"), "."),
)

_HEX = {32: "md5", 40: "sha1", 64: "sha256", 128: "sha512"}
_HEX_RE = re.compile(r"^[0-9a-fA-F]+$")
_CVE_RE = re.compile(r"^CVE[-\u2010-\u2015\u2212](\d{4})[-\u2010-\u2015\u2212](\d{4,7})$", re.IGNORECASE)
_TECHNIQUE_RE = re.compile(r"^T\d{4}(?:\.\d{3})?$", re.IGNORECASE)  # ATT&CK technique and sub-technique ids
_EMAIL_RE = re.compile(r"^[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+\.)+[A-Za-z]{2,63}$")
_LABEL = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
_DOMAIN_RE = re.compile(rf"^(?:{_LABEL}\.)+(?:[A-Za-z]{{2,63}}|xn--[A-Za-z0-9-]{{2,59}})$")
_URL_RE = re.compile(r"^(?:https?|ftp|hxxps?)://\S+$", re.IGNORECASE)


def refang(text: str) -> str:
    """The text with defanged notations undone; a fanged value comes back unchanged."""
    for pattern, replacement in _DEFANG_SUBS:
        text = pattern.sub(replacement, text)
    return text


def _ip_type(value: str) -> str | None:
    try:
        address = ipaddress.ip_address(value.strip("[]"))
    except ValueError:
        return None
    return "ipv4" if address.version == 4 else "ipv6"


def detect_type(value: str) -> str | None:
    """The IOC type of a (refanged) value, or None when it is none of the spec's types."""
    text = value.strip()
    ip = _ip_type(text)
    if ip is not None:
        return ip
    if _CVE_RE.match(text):
        return "cve"
    if _TECHNIQUE_RE.match(text):
        return "mitre-attack"
    if _HEX_RE.match(text) and len(text) in _HEX:
        return _HEX[len(text)]
    if _URL_RE.match(text):
        return "url"
    if _EMAIL_RE.match(text):
        return "email"
    if _DOMAIN_RE.match(text.rstrip(".")):
        return "domain"
    return None


def _ipv6_hostport(hostport: str) -> str:
    """``[2A01:04F8::0042]:8080`` as ``[2a01:4f8::42]:8080``: RFC 5952 spelling inside the brackets."""
    host, bracket, port = hostport.partition("]")
    try:
        address = ipaddress.IPv6Address(host.lstrip("["))
    except ValueError:
        return hostport.lower()
    return f"[{address}]{port}" if bracket else str(address)


def _normalize_url(value: str) -> str:
    """Lowercase scheme and host (case-insensitive by RFC 3986 section 6.2.2.1); path and query as written."""
    parts = urlsplit(value)
    host = parts.netloc
    userinfo, _, hostport = host.rpartition("@")
    hostport = hostport.lower().rstrip(".") if ":" not in hostport.strip("[]") else _ipv6_hostport(hostport)
    netloc = f"{userinfo}@{hostport}" if userinfo else hostport
    return urlunsplit((parts.scheme.lower(), netloc, parts.path, parts.query, parts.fragment))


def normalize(ioc_type: str, value: str) -> str:
    """The record spelling of ``value``: lowercase hosts and hashes, canonical IPs, upper-case CVE ids."""
    text = value.strip()
    if ioc_type in ("ipv4", "ipv6"):
        return str(ipaddress.ip_address(text.strip("[]")))
    if ioc_type == "cve":
        match = _CVE_RE.match(text)
        return f"CVE-{match.group(1)}-{match.group(2)}" if match else text.upper()
    if ioc_type == "mitre-attack":
        if not _TECHNIQUE_RE.match(text):
            raise ValueError(f"{value!r} is not an ATT&CK technique id (T1234 or T1234.567)")
        return text.upper()
    if ioc_type == "url":
        return _normalize_url(text)
    if ioc_type == "email":
        local, _, domain = text.rpartition("@")
        return f"{local.lower()}@{domain.lower().rstrip('.')}"
    if ioc_type == "domain":
        return text.lower().rstrip(".")
    return text.lower()  # hashes
