"""The value rules of each IOC type: what a value of the type looks like and its one record spelling.

These are the detection and normalisation functions the registry (``store.ioctypes``) names per type;
``store.indicators`` dispatches through the registry, so every layer that meets an indicator value (the
extractor in ingest/, the search and lookup handlers, the record merge) spells it one way: ``EVIL.com``
and ``evil.com.`` are one record, an IPv6 address has one canonical text (RFC 5952, as ``ipaddress``
prints it).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit

_HEX_RE = re.compile(r"^[0-9a-fA-F]+$")
_CVE_RE = re.compile(r"^CVE[-\u2010-\u2015\u2212](\d{4})[-\u2010-\u2015\u2212](\d{4,7})$", re.IGNORECASE)
_TECHNIQUE_RE = re.compile(r"^T\d{4}(?:\.\d{3})?$", re.IGNORECASE)  # ATT&CK technique and sub-technique ids
_EMAIL_RE = re.compile(r"^[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+\.)+[A-Za-z]{2,63}$")
# RFC 1035 section 2.3.4: 63 octets a label, 255 a name on the wire (253 characters written, without the root).
MAX_LABEL, MAX_NAME = 63, 253
_LABEL = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
_DOMAIN_RE = re.compile(rf"^(?:{_LABEL}\.)+(?:[A-Za-z]{{2,63}}|xn--[A-Za-z0-9-]{{2,59}})$")
_URL_RE = re.compile(r"^(?:https?|ftp|hxxps?)://\S+$", re.IGNORECASE)
# Parts of values, for the types searched by substring (spec, IOC search): the characters a domain name
# holds, and any text without white space for a URL.
_DOMAIN_PART_RE = re.compile(r"^[A-Za-z0-9.-]+$")
_URL_PART_RE = re.compile(r"^\S+$")


def ip_version(value: str) -> int | None:
    """4 or 6 for an IP address (IPv6 may be bracketed), else None."""
    try:
        return ipaddress.ip_address(value.strip("[]")).version
    except ValueError:
        return None


def is_ipv4(value: str) -> bool:
    return ip_version(value) == 4


def is_ipv6(value: str) -> bool:
    return ip_version(value) == 6


def hex_digest(length: int) -> Callable[[str], bool]:
    """The detector of a hex digest of ``length`` characters."""
    return lambda value: len(value) == length and bool(_HEX_RE.match(value))


def is_cve(value: str) -> bool:
    return bool(_CVE_RE.match(value))


def is_technique(value: str) -> bool:
    return bool(_TECHNIQUE_RE.match(value))


def is_url(value: str) -> bool:
    return bool(_URL_RE.match(value))


def is_email(value: str) -> bool:
    return bool(_EMAIL_RE.match(value))


def is_domain(value: str) -> bool:
    name = value.rstrip(".")
    return len(name) <= MAX_NAME and bool(_DOMAIN_RE.match(name))


def fits_dns(host: str) -> bool:
    """A host name no longer than DNS allows: 63 characters a label, 253 the name (RFC 1035 section 2.3.4)."""
    name = host.rstrip(".")
    return len(name) <= MAX_NAME and all(len(label) <= MAX_LABEL for label in name.split("."))


def is_domain_part(value: str) -> bool:
    """Letters, digits, ``-`` and ``.``: text that can occur inside a domain name."""
    return bool(_DOMAIN_PART_RE.match(value))


def is_url_part(value: str) -> bool:
    """Text without white space: it can occur inside a URL."""
    return bool(_URL_PART_RE.match(value))


def normalize_ip(value: str) -> str:
    return str(ipaddress.ip_address(value.strip("[]")))


def normalize_cve(value: str) -> str:
    match = _CVE_RE.match(value)
    return f"CVE-{match.group(1)}-{match.group(2)}" if match else value.upper()


def normalize_technique(value: str) -> str:
    if not _TECHNIQUE_RE.match(value):
        raise ValueError(f"{value!r} is not an ATT&CK technique id (T1234 or T1234.567)")
    return value.upper()


def _ipv6_hostport(hostport: str) -> str:
    """``[2A01:04F8::0042]:8080`` as ``[2a01:4f8::42]:8080``: RFC 5952 spelling inside the brackets."""
    host, bracket, port = hostport.partition("]")
    try:
        address = ipaddress.IPv6Address(host.lstrip("["))
    except ValueError:
        return hostport.lower()
    return f"[{address}]{port}" if bracket else str(address)


def normalize_url(value: str) -> str:
    """Lowercase scheme and host (case-insensitive by RFC 3986 section 6.2.2.1); path and query as written."""
    parts = urlsplit(value)
    host = parts.netloc
    userinfo, _, hostport = host.rpartition("@")
    hostport = hostport.lower().rstrip(".") if ":" not in hostport.strip("[]") else _ipv6_hostport(hostport)
    netloc = f"{userinfo}@{hostport}" if userinfo else hostport
    return urlunsplit((parts.scheme.lower(), netloc, parts.path, parts.query, parts.fragment))


def normalize_email(value: str) -> str:
    local, _, domain = value.rpartition("@")
    return f"{local.lower()}@{domain.lower().rstrip('.')}"


def normalize_domain(value: str) -> str:
    return value.lower().rstrip(".")


def lowercase(value: str) -> str:
    """Hex digests: case carries no meaning."""
    return value.lower()
