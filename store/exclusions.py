"""What one account keeps out of its IOC exports and TAXII pages, as one matcher.

:class:`AccountExclusions` is built from the account's allowlist (``store.ports.allowlist``): exact values,
IP networks, and domains with every subdomain (a URL or an e-mail address on such a domain is left out too).
The values the account reported as false positives (POST /api/v1/sightings, ``store.ports.sightings``) join
through :meth:`AccountExclusions.with_values`, so every consumer applies one object.

:func:`parse_entry` reads what a user typed into an entry, defanged forms accepted, or says why it is none.
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from store.indicators import detect_type, normalize, refang
from store.matching import HostIndex, IpNetwork, NetIndex, host_key, parse_address
from store.ports import Stores
from store.ports.allowlist import AllowEntry
from store.records import Ioc

MAX_ENTRY_CHARS = 2048


class EntryError(ValueError):
    """Text that is no allowlist entry; the message says why."""


def parse_entry(text: str) -> tuple[str, str, str]:
    """(kind, type, normalised value) of an entry: a CIDR network, a domain (with its subdomains), or one
    value of any other IOC type (an address, a URL, a hash, an e-mail address, a CVE)."""
    raw = refang(text.strip())
    if not raw:
        raise EntryError("is empty")
    if len(raw) > MAX_ENTRY_CHARS:
        raise EntryError(f"is longer than {MAX_ENTRY_CHARS:,} characters")
    if "/" in raw and "://" not in raw:
        return _network(raw)
    ioc_type = detect_type(raw)
    if ioc_type is None:
        raise EntryError("is no IP address, CIDR network, domain, URL, hash, e-mail address or CVE")
    value = normalize(ioc_type, raw)
    return ("domain" if ioc_type == "domain" else "value"), ioc_type, value


def _network(raw: str) -> tuple[str, str, str]:
    try:
        network = ipaddress.ip_network(raw, strict=False)
    except ValueError as exc:
        raise EntryError("is not a CIDR network such as 192.0.2.0/24 or 2001:db8::/32") from exc
    if network.prefixlen < network.max_prefixlen // 4:  # a /7 or a /31 of IPv6: most of the Internet
        raise EntryError(f"is too wide a network (at least /{network.max_prefixlen // 4} for IPv{network.version})")
    return "cidr", f"ipv{network.version}", str(network)


@dataclass
class AccountExclusions:
    """Values, networks and domains left out of one account's exports; ``excludes`` decides per record."""

    values: set[tuple[str, str]] = field(default_factory=set)  # (IOC type, normalised value)
    domains: HostIndex = field(default_factory=HostIndex)
    networks: NetIndex = field(default_factory=NetIndex)
    keys: list[str] = field(default_factory=list)  # every entry, for the digest

    @classmethod
    def from_allowlist(cls, entries: Iterable[AllowEntry]) -> AccountExclusions:
        out = cls()
        for entry in entries:
            if entry.kind == "cidr":
                out.add_network(ipaddress.ip_network(entry.value, strict=False))
            elif entry.kind == "domain":
                out.add_domain(entry.value)
            else:
                out.with_values([(entry.type, entry.value)])
        return out

    def add_network(self, network: IpNetwork) -> None:
        self.networks.add_network(network, "allowlist")
        self.keys.append(f"cidr:{network}")

    def add_domain(self, domain: str) -> None:
        self.domains.add_host(domain, "allowlist")
        self.keys.append(f"domain:{host_key(domain)}")

    def with_values(self, values: Iterable[tuple[str, str]]) -> AccountExclusions:
        """These (type, value) pairs left out too (an allowlist's values, an account's false positives)."""
        for pair in values:
            self.values.add(pair)
            self.keys.append("value:{}:{}".format(*pair))
        return self

    @property
    def empty(self) -> bool:
        return not self.keys

    @property
    def digest(self) -> str:
        """Names the exclusions (equal sets in any order, one digest): part of a cached export's key."""
        return hashlib.sha256("\n".join(sorted(set(self.keys))).encode()).hexdigest()[:16]

    def excludes(self, ioc: Ioc) -> bool:
        if (ioc.type, ioc.value) in self.values:
            return True
        host = _host(ioc)
        if host is None:
            return False
        address = parse_address(host)
        return bool(self.networks.match(address) if address is not None else self.domains.match(host))


async def account_exclusions(stores: Stores, user_id: str) -> AccountExclusions:
    """What the account ``user_id`` keeps out of its exports and TAXII pages: its allowlist and, at once, the
    values it reported as false positives."""
    allowed = AccountExclusions.from_allowlist(await stores.allowlist.list_allow_entries(user_id))
    return allowed.with_values(await stores.sightings.false_positives_of(user_id))


def _host(ioc: Ioc) -> str | None:
    """The address or domain a record names: itself, a URL's host, an e-mail address's domain."""
    if ioc.type in ("ipv4", "ipv6", "domain"):
        return ioc.value
    if ioc.type == "url":
        try:
            return urlsplit(ioc.value).hostname
        except ValueError:
            return None
    if ioc.type == "email":
        return ioc.value.rpartition("@")[2]
    return None
