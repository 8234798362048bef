"""A DNS Response Policy Zone (RPZ) for reported domains: a zone file BIND, Unbound, PowerDNS Recursor and
Knot Resolver load as a policy zone (draft-vixie-dnsop-dns-rpz, "Policy Actions").

Each domain is a QNAME trigger with the NXDOMAIN action, ``CNAME .``, for the name itself and (the
registry's ``Rpz.subdomains``) for ``*.name``. Owner names are relative, so the operator names the zone
in its own configuration (``zone "rpz.ctiwire" { type primary; file "ctiwire.rpz"; };``). The apex has
the SOA and NS records every zone needs (RPZ section 2: the NS is never queried, ``localhost.`` by
convention). The SOA serial is the newest of the generation hour and the records' last change, in
seconds since the epoch (a 32-bit serial until 2106, RFC 1982): a rebuild with changed data, or a later
hour, always has a higher serial, so secondaries transferring the zone notice.

Names are validated rather than escaped: a zone file gives meaning to ``;``, ``(``, ``)``, ``"``, ``$``,
``@``, ``\\`` and whitespace, and a record's domain holds none of them (``store.ioc_values.is_domain``:
letters, digits and inner hyphens, at most 63 per label). Names too long to fit beneath the zone's own
name (DNS names hold 255 octets, RFC 1035 section 2.3.4) and anything else that is no valid name are left
out and counted in the ``;`` comment header, beside the registry's reasons for the other types.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import ClassVar

from config.tiers import LIST_EXPORT_COST, SCOPE_EXPORTS
from exporters.base import ExportContext, Exporter, chunked, unique_records
from store.ioc_values import is_domain
from store.ioctypes import Rpz, mapping, supported
from store.records import Ioc

TTL = 300
# SOA timers (RFC 1912 section 2.2): refresh hourly like the exports, retry in 10 minutes, expire in 10 days.
SOA_TIMERS = "3600 600 864000 300"
# Room left for ``*.`` and the zone's own name (``rpz.ctiwire.`` is 13 octets) within the 253 characters of
# a name's text form.
MAX_NAME_LENGTH = 220
INVALID_NOTE = "domain record(s) omitted: not a DNS name a zone can hold (invalid label or over 220 characters)"


def valid_name(domain: str) -> bool:
    return len(domain) <= MAX_NAME_LENGTH and is_domain(domain) and not domain.endswith(".")


def serial(iocs: Sequence[Ioc], generated_at: datetime) -> int:
    """Seconds since the epoch of the newest of the build's hour and its records' last change."""
    newest = max([generated_at, *(i.modified for i in iocs)])
    return int(newest.timestamp()) % 2**32


def records(domain: str) -> str:
    """The zone lines for one domain: the name, and ``*.name`` when the registry blocks subdomains too."""
    names = [domain, f"*.{domain}"] if mapping("domain", "rpz", Rpz).subdomains else [domain]
    return "".join(f"{name} CNAME .\n" for name in names)


class RpzExporter(Exporter):
    """A zone file: comments, ``$TTL``, SOA and NS at the apex, then one NXDOMAIN trigger per domain."""

    format_id: ClassVar[str] = "rpz"
    media_type: ClassVar[str] = "text/dns"  # RFC 4027: the media type of a master (zone) file
    extension: ClassVar[str] = "rpz.zone"
    scope: ClassVar[str] = SCOPE_EXPORTS
    summary: ClassVar[str] = "a DNS Response Policy Zone (RPZ) blocking reported domains"
    cost: ClassVar[int] = LIST_EXPORT_COST

    def encode(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        chosen = [i for i in unique_records(iocs) if supported(i.type, "rpz")]
        domains = sorted(i.value for i in chosen if valid_name(i.value))
        dropped = len(chosen) - len(domains)
        notes = [f"{dropped} {INVALID_NOTE}"] if dropped else []
        header = ctx.header_lines("DNS Response Policy Zone: reported domains answer NXDOMAIN", iocs, "rpz", notes)
        yield (
            "".join(f"; {line}\n" for line in header)
            + f"$TTL {TTL}\n@ SOA localhost. hostmaster.localhost. ({serial(chosen, ctx.generated_at)} "
            f"{SOA_TIMERS})\n@ NS localhost.\n"
        ).encode()
        yield from chunked(records(domain).encode() for domain in domains)
