"""Set lookups for value lists: exact strings, hosts with their subdomains, and IP networks.

Shared by the warninglists (``store.warninglists``) and an account's own exclusions
(``store.exclusions``): each entry carries labels (list names, entry ids), and a lookup answers every
label whose entry matches. Lookups cost a few dict probes whatever the lists' size: a host is probed
once per parent domain, an address once per distinct prefix length the lists hold.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class _Labels:
    """Entry -> labels, with one tuple object per distinct label set (millions of entries share a few)."""

    def __init__(self) -> None:
        self.index: dict[object, tuple[str, ...]] = {}
        self._shared: dict[tuple[str, ...], tuple[str, ...]] = {}

    def add(self, key: object, label: str) -> None:
        held = self.index.get(key, ())
        if label not in held:
            labels = held + (label,)
            self.index[key] = self._shared.setdefault(labels, labels)


class ExactIndex(_Labels):
    """Whole values, compared as given (callers pass the record spelling)."""

    def match(self, value: str) -> tuple[str, ...]:
        return self.index.get(value, ())


class HostIndex(_Labels):
    """Domains that also cover their subdomains: ``example.com`` matches ``a.b.example.com``."""

    def add_host(self, host: str, label: str) -> None:
        self.add(host_key(host), label)

    def match(self, host: str) -> tuple[str, ...]:
        found: tuple[str, ...] = ()
        for domain in parent_domains(host):
            found += self.index.get(domain, ())
        return tuple(dict.fromkeys(found))


def host_key(host: str) -> str:
    """A host as lists and records spell it: lowercase, no leading or trailing dot."""
    return host.strip().strip(".").lower()


def parent_domains(host: str) -> list[str]:
    """``host`` and every domain above it: ``a.b.c`` -> ``a.b.c``, ``b.c``, ``c``."""
    labels = host_key(host).split(".")
    return [".".join(labels[start:]) for start in range(len(labels))]


class NetIndex:
    """IP networks by prefix length: an address is masked once per length present and looked up."""

    def __init__(self) -> None:
        self._by_shift: dict[int, dict[int, _Labels]] = {4: {}, 6: {}}  # version -> host bits -> networks

    def add_network(self, network: IpNetwork, label: str) -> None:
        shift = network.max_prefixlen - network.prefixlen
        self._by_shift[network.version].setdefault(shift, _Labels()).add(int(network.network_address) >> shift, label)

    def match(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> tuple[str, ...]:
        found: tuple[str, ...] = ()
        number = int(address)
        for shift, labels in self._by_shift[address.version].items():
            found += labels.index.get(number >> shift, ())
        return tuple(dict.fromkeys(found))


def parse_network(text: str) -> IpNetwork | None:
    """A network from ``a.b.c.d/n`` or a bare address (a /32 or /128); None when it is neither."""
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        return None


def parse_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None


def bare_url_host(url: str) -> str | None:
    """The host of a URL that names a whole site (no path beyond ``/``, no query): such a URL stands for its
    host. A URL with a path names one resource, which a benign host can serve for an attacker (a file on a
    code-hosting or file-sharing site), so it is not judged by its host."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.path not in ("", "/") or parts.query:
        return None
    return parts.hostname


def unique(labels: Iterable[str]) -> list[str]:
    """Labels in first-seen order, once each."""
    return list(dict.fromkeys(labels))
