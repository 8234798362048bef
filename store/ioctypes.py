"""The one registry of IOC types: one entry per type holds everything the type means.

An entry states how a value of the type is detected and spelled (``store.ioc_values``), which rule of the
article scan finds it (``ingest/enrich/scan.py``), and what every consumer makes of it: its STIX object
and pattern path, MISP attribute, CEF name and key, OpenIOC term, Sigma log source and field, hunting-query
fields, TAXII collection, and its place in the network formats (blocklist, DNS RPZ, Suricata rules, Elastic
Common Schema documents). Where a consumer has no way to express a type the entry says so with
``Unsupported(reason)``, and the consumer acts on it the way ``POLICIES`` declares: ``skip`` formats leave
the records out and say how many and why in the document, ``raise`` formats refuse with
``UnsupportedIocType``. Nothing is dropped silently and no consumer keeps a per-type table of its own.

The facts are plain data (strings, small dataclasses), so the store knows no exporter: each exporter
reads its own field here. Detection precedence is registration order: when two types claim one value
(``claimants``), the earlier keeps it, and the caller asks for the later one by name (``type=``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from store import ioc_values as v


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A consumer cannot express the type; ``reason`` is what the consumer tells its reader."""

    reason: str


_T = TypeVar("_T")


class UnsupportedIocType(ValueError):
    """A ``raise``-policy consumer met a type it has no mapping for, or a type is not registered at all."""

    def __init__(self, ioc_type: str, consumer: str, reason: str) -> None:
        super().__init__(f"{consumer} cannot express IOC type {ioc_type!r}: {reason}")
        self.ioc_type, self.consumer, self.reason = ioc_type, consumer, reason


@dataclass(frozen=True, slots=True)
class Stix:
    """STIX 2.1 object type of a record; ``indicator`` records carry a pattern on ``path`` (s. 9; hash names
    from the hash-algorithm-ov)."""

    object_type: str
    path: str = ""


@dataclass(frozen=True, slots=True)
class Misp:
    """MISP attribute type (spec, "MISP event") and category, a pair describeTypes.json's category/type
    matrix allows: network indicators are "Network activity"; hashes and sender addresses arrive with the
    payload ("Payload delivery"); a CVE or technique is analysis context ("External analysis"). ``to_ids``:
    detection-ready, network and hash indicators only."""

    type: str
    category: str
    to_ids: bool


@dataclass(frozen=True, slots=True)
class Cef:
    """CEF event name, and the dictionary key that also carries the value with its maximum length (0: an
    address key, typed). Without a key the value travels in ``cs1`` alone."""

    name: str
    key: str = ""
    max_length: int = 0


@dataclass(frozen=True, slots=True)
class OpenIocTerm:
    """A term of current.iocterms: search path; context type ("mir" for the endpoint terms, term-source
    application/vnd.fireeye.endpoint, "network" and "email" for the protocol terms, as IOCe writes them);
    display type; whether case matters (URL paths and mailbox local parts do, hosts and digests do not)."""

    search: str
    context: str
    content: str
    case_sensitive: bool = False


@dataclass(frozen=True, slots=True)
class SigmaSource:
    """A Sigma log source and the field values are matched in; one rule group per source."""

    key: str
    title: str
    category: str
    product: str | None
    field: str


@dataclass(frozen=True, slots=True)
class Sigma:
    source: SigmaSource
    prefix: str = ""  # written before the value ("MD5=" in Sysmon's Hashes)


@dataclass(frozen=True, slots=True)
class Hunting:
    """Fields searched by the /lookup queries: Splunk CIM, Elastic Common Schema, and a Sentinel KQL query
    with ``{v}`` where the quoted value goes."""

    splunk: tuple[str, ...]
    elastic: tuple[str, ...]
    sentinel: str


@dataclass(frozen=True, slots=True)
class Blocklist:
    """The kind of list a value belongs on (the plain-text blocklist names it in each type's section)."""

    use: str


@dataclass(frozen=True, slots=True)
class Rpz:
    """A DNS Response Policy Zone QNAME trigger for the name, and with ``subdomains`` one for ``*.name``."""

    subdomains: bool = True


@dataclass(frozen=True, slots=True)
class SuricataMatch:
    """One Suricata rule per value: the header protocol, the sticky buffer the value is matched in ("": the
    address itself in the rule header), and what the alert message says was seen."""

    protocol: str
    buffer: str
    seen: str


@dataclass(frozen=True, slots=True)
class Suricata:
    matches: tuple[SuricataMatch, ...]


@dataclass(frozen=True, slots=True)
class Ecs:
    """Elastic Common Schema: ``threat.indicator.type`` (one of its expected values, STIX cyber-observable
    names) and the ``threat.indicator.*`` fields that hold the value."""

    indicator_type: str
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IocTypeSpec:
    name: str
    label: str  # as a reader names it ("SHA-512", "ATT&CK technique")
    example: str  # a value in its record spelling; the registry's tests run it through every consumer
    detect: Callable[[str], bool]
    normalize: Callable[[str], str]
    scan: str | Unsupported  # the rule of ingest/enrich/scan.py that finds it in article text
    stix: Stix | Unsupported
    misp: Misp | Unsupported
    cef: Cef | Unsupported
    openioc: OpenIocTerm | Unsupported
    sigma: Sigma | Unsupported
    hunting: Hunting | Unsupported
    taxii: str | Unsupported  # its TAXII collection besides all-iocs
    blocklist: Blocklist | Unsupported
    rpz: Rpz | Unsupported
    suricata: Suricata | Unsupported
    ecs: Ecs | Unsupported
    hex_length: int = 0  # a digest's length, for the scan's hex rule
    # Spec, IOC search: the types an untyped search for a value of this type matches by substring (empty:
    # exact match on its own type only).
    substring_search: tuple[str, ...] = ()
    # Spec, IOC search with ``type``: what a part of a value looks like, for a type searched by substring
    # (None: only a whole value, ``detect``, is a valid query).
    part: Callable[[str], bool] | None = None
    # How fast its score decays (store.decay.DECAY_CLASSES): addresses change hands in days, names and URLs
    # in weeks, a file's digest names that file for good.
    decay: str = "name"

    def accepts_query(self, text: str) -> bool:
        """Whether ``text`` (refanged) is a search for this type: a whole value, or a part of one."""
        return self.detect(text) or (self.part is not None and self.part(text))

    def reason_for(self, consumer: str) -> str:
        """Why ``consumer`` cannot express the type ("" when it can)."""
        fact = getattr(self, consumer)
        return fact.reason if isinstance(fact, Unsupported) else ""


# Where each format carries an indicator's lifecycle (store.decay: score, status, valid_until), or why it
# cannot; the exporters read it here.
LIFECYCLE_PLACES: dict[str, str | Unsupported] = {
    "stix": "indicator valid_until, and revoked: true with a newer modified (STIX 2.1 s. 3.2, 4.6)",
    "misp": "machine tags decay-score, status and valid-until (the event schema has no decay_score key), and "
            "to_ids false once expired or revoked",
    "cef": "cn1 (score) and deviceCustomDate1 (valid until)",
    "openioc": Unsupported("OpenIOC 1.1 has no per-item validity; expired and revoked items are left out"),
    "sigma": Unsupported("a rule groups many values and has no per-value validity; expired and revoked values "
                         "are left out"),
}


# What each consumer does with an ``Unsupported`` type (see the module docstring).
POLICIES: dict[str, str] = {
    "scan": "skip", "stix": "raise", "misp": "raise", "cef": "raise", "openioc": "skip", "sigma": "skip",
    "hunting": "raise", "taxii": "skip", "blocklist": "skip", "rpz": "skip", "suricata": "skip", "ecs": "skip",
}
CONSUMERS: tuple[str, ...] = tuple(POLICIES)

_NO_SCAN_CVE = Unsupported("CVE ids are read by ingest.enrich.pipeline.extract_cves into cve_ids")
_NO_SCAN_TECHNIQUE = Unsupported("ATT&CK techniques are read by the enrichment's technique rules "
                                 "(ingest.enrich.attack)")
_NO_OPENIOC = Unsupported("OpenIOC 1.1 has no term for them")
_SIGMA_IP = SigmaSource("ip", "Network connections to reported IP addresses", "network_connection", "windows",
                        "DestinationIp")
_SIGMA_HASH = SigmaSource("hash", "Processes started from reported file hashes", "process_creation", "windows",
                          "Hashes|contains")
_NOT_LISTED = Unsupported("it is context, no value a network tool can block")
_RPZ_NAMES_ONLY = Unsupported("the zone blocks DNS names only; the blocklist carries these values")
_SURICATA_IP = Suricata((SuricataMatch("ip", "", "Traffic to reported address"),))
_SURICATA_NO_HASH = Unsupported("Suricata matches file digests only from list files (filemd5, filesha1, filesha256), "
                                "not inside a rule")
_NO_ECS_CONTEXT = Unsupported("ECS has no indicator type for it; indicators carry their CVEs as tags and their "
                              "techniques in threat.technique.id")
_IP_HUNT = Hunting(("src_ip", "dest_ip", "src", "dest"), ("source.ip", "destination.ip"),
                   "union isfuzzy=true (CommonSecurityLog | where SourceIP == {v} or DestinationIP == {v}), "
                   "(DeviceNetworkEvents | where RemoteIP == {v})")


def _ip(name: str, label: str, example: str, detect: Callable[[str], bool], cef_key: str) -> IocTypeSpec:
    return IocTypeSpec(
        name, label, example, detect, v.normalize_ip, "ip", Stix("indicator", f"{name}-addr:value"),
        Misp("ip-src", "Network activity", True), Cef(f"Malicious {label}", cef_key),
        OpenIocTerm("PortItem/remoteIP", "mir", "IP"), Sigma(_SIGMA_IP), _IP_HUNT, "ip-addresses",
        Blocklist("firewall address list"), _RPZ_NAMES_ONLY, _SURICATA_IP, Ecs(f"{name}-addr", ("ip",)),
        decay="address")


def _hash(name: str, label: str, length: int, example: str, openioc: OpenIocTerm | Unsupported,
          sigma: bool, sentinel: str) -> IocTypeSpec:
    """A file digest: Sysmon's ``Hashes`` computes MD5, SHA-1 and SHA-256 only, hence ``sigma``."""
    return IocTypeSpec(
        name, label, example, v.hex_digest(length), v.lowercase, "hex",
        Stix("indicator", "file:hashes." + (label if "-" not in label else f"'{label}'")),
        Misp(name, "Payload delivery", True), Cef(f"Malicious file {label}", "fileHash", 255), openioc,
        Sigma(_SIGMA_HASH, f"{name.upper()}=") if sigma else Unsupported("Sysmon computes no SHA-512"),
        Hunting(("file_hash", "hash"), (f"file.hash.{name}", f"process.hash.{name}"), sentinel + " =~ {v}"),
        "file-hashes", Blocklist("endpoint or mail-gateway hash list"), _RPZ_NAMES_ONLY, _SURICATA_NO_HASH,
        Ecs("file", (f"file.hash.{name}",)), length, decay="file")


# Registration order is detection precedence (module docstring) and the order of IOC_TYPES.
_BUILT_IN: tuple[IocTypeSpec, ...] = (
    _ip("ipv4", "IPv4 address", "203.0.113.7", v.is_ipv4, "dst"),
    _ip("ipv6", "IPv6 address", "2001:db8::7", v.is_ipv6, "c6a1"),
    IocTypeSpec(
        "domain", "domain", "evil.example.net", v.is_domain, v.normalize_domain, "domain",
        Stix("indicator", "domain-name:value"), Misp("domain", "Network activity", True),
        Cef("Malicious domain", "dhost", 1023), OpenIocTerm("Network/DNS", "network", "string"),
        Sigma(SigmaSource("domain", "DNS queries for reported domains", "dns_query", "windows", "QueryName")),
        Hunting(("query", "dest_host", "url_domain"), ("dns.question.name", "url.domain", "destination.domain"),
                "union isfuzzy=true (DnsEvents | where Name =~ {v}), (DeviceNetworkEvents | where RemoteUrl has {v})"),
        "domains", Blocklist("DNS or proxy domain list"), Rpz(),
        Suricata((SuricataMatch("dns", "dns.query", "Query for reported domain"),
                  SuricataMatch("tls", "tls.sni", "SNI of reported domain"),
                  SuricataMatch("http", "http.host", "Host of reported domain"))),
        Ecs("domain-name", ("url.domain",)), substring_search=("domain", "url"), part=v.is_domain_part),
    IocTypeSpec(
        "url", "URL", "http://evil.example.net/dl/a.exe", v.is_url, v.normalize_url, "url",
        Stix("indicator", "url:value"), Misp("url", "Network activity", True), Cef("Malicious URL", "request", 1023),
        OpenIocTerm("UrlHistoryItem/URL", "mir", "string", case_sensitive=True),
        Sigma(SigmaSource("url", "Proxy requests for reported URLs", "proxy", None, "c-uri")),
        Hunting(("url",), ("url.full", "url.original"), "DeviceNetworkEvents | where RemoteUrl =~ {v}"), "urls",
        Blocklist("proxy URL list"),
        Unsupported("a zone blocks whole names, and a URL's host may serve harmless pages too (its domain, when "
                    "reported, is a record of its own)"),
        Suricata((SuricataMatch("http", "http.uri", "Request for reported URL on"),)),
        Ecs("url", ("url.full", "url.original")),
        substring_search=("domain", "url"), part=v.is_url_part),
    _hash("md5", "MD5", 32, "d41d8cd98f00b204e9800998ecf8427e", OpenIocTerm("FileItem/Md5sum", "mir", "md5"), True,
          "DeviceFileEvents | where MD5"),
    _hash("sha1", "SHA-1", 40, "da39a3ee5e6b4b0d3255bfef95601890afd80709",
          OpenIocTerm("FileItem/Sha1sum", "mir", "sha1"), True, "DeviceFileEvents | where SHA1"),
    _hash("sha256", "SHA-256", 64, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
          OpenIocTerm("FileItem/Sha256sum", "mir", "sha256"), True, "DeviceFileEvents | where SHA256"),
    _hash("sha512", "SHA-512", 128, "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
          "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e", _NO_OPENIOC, False,
          "CommonSecurityLog | where FileHash"),
    IocTypeSpec(
        "email", "e-mail sender", "billing@evil.example.net", v.is_email, v.normalize_email, "email",
        Stix("indicator", "email-addr:value"), Misp("email-src", "Payload delivery", False),
        Cef("Malicious sender address", "suser", 1023),
        OpenIocTerm("Email/From", "email", "string", case_sensitive=True),
        Unsupported("no Sigma log source carries e-mail senders"),
        Hunting(("src_user", "sender", "recipient"), ("email.from.address", "email.sender.address"),
                "EmailEvents | where SenderFromAddress =~ {v}"),
        Unsupported("no collection of its own; served in all-iocs"), Blocklist("mail-gateway sender list"),
        _RPZ_NAMES_ONLY, Unsupported("the rules match network flows, not mail senders"),
        Ecs("email-addr", ("email.address",))),
    IocTypeSpec(
        "cve", "CVE", "CVE-2024-3400", v.is_cve, v.normalize_cve, _NO_SCAN_CVE, Stix("vulnerability"),
        Misp("vulnerability", "External analysis", False), Cef("Exploited vulnerability"), _NO_OPENIOC,
        Unsupported("a CVE is no log value; rules carry their indicators' CVEs as cve.* tags"),
        Hunting(("cve", "signature"), ("vulnerability.id",), "DeviceTvmSoftwareVulnerabilities | where CveId =~ {v}"),
        "cves", _NOT_LISTED, _NOT_LISTED, Unsupported("a CVE is no network value; the rules name no CVE"),
        _NO_ECS_CONTEXT, decay="vulnerability"),
    IocTypeSpec(
        # MISP has no attribute type for a technique: the id as analysis text.
        "mitre-attack", "ATT&CK technique", "T1566.001", v.is_technique, v.normalize_technique, _NO_SCAN_TECHNIQUE,
        Stix("attack-pattern"), Misp("text", "External analysis", False), Cef("Reported ATT&CK technique"),
        _NO_OPENIOC, Unsupported("a technique is no log value; rules carry their indicators' techniques as "
                                 "attack.t* tags"),
        Hunting(("annotations.mitre_attack", "mitre_technique_id"),
                ("threat.technique.id", "threat.technique.subtechnique.id"),
                "SecurityAlert | where Techniques has {v}"),
        "attack-patterns", _NOT_LISTED, _NOT_LISTED, Unsupported("a technique is no network value"),
        _NO_ECS_CONTEXT, decay="vulnerability"),
)
REGISTRY: dict[str, IocTypeSpec] = {spec.name: spec for spec in _BUILT_IN}
# Spec, IOC: the types of the API (the `type` parameter's enum, the records' `type`).
IOC_TYPES: tuple[str, ...] = tuple(REGISTRY)


def register(spec: IocTypeSpec) -> None:
    """Add a type after the built-in ones (it loses detection ties to every earlier type)."""
    if spec.name in REGISTRY:
        raise ValueError(f"IOC type {spec.name!r} is already registered")
    REGISTRY[spec.name] = spec


def unregister(name: str) -> None:
    REGISTRY.pop(name)


def spec_of(ioc_type: str) -> IocTypeSpec:
    spec = REGISTRY.get(ioc_type)
    if spec is None:
        raise UnsupportedIocType(ioc_type, "registry", "not a registered IOC type")
    return spec


def mapping(ioc_type: str, consumer: str, kind: type[_T]) -> _T:
    """The consumer's mapping for the type, or ``UnsupportedIocType`` with the registry's reason."""
    fact = getattr(spec_of(ioc_type), consumer)
    if isinstance(fact, Unsupported):
        raise UnsupportedIocType(ioc_type, consumer, fact.reason)
    if not isinstance(fact, kind):
        raise TypeError(f"{ioc_type}.{consumer} is a {type(fact).__name__}, not a {kind.__name__}")
    return fact


def supported(ioc_type: str, consumer: str) -> bool:
    return not isinstance(getattr(spec_of(ioc_type), consumer), Unsupported)


def skipped_note(ioc_types: Iterable[str], consumer: str) -> list[str]:
    """What a ``skip`` consumer leaves out: per reason, how many records, of which types, and why."""
    counts: dict[str, int] = {}
    for ioc_type in ioc_types:
        reason = spec_of(ioc_type).reason_for(consumer)
        if reason:
            counts[reason] = counts.get(reason, 0) + 1
    return [f"{n} {_or([s.label for s in specs() if s.reason_for(consumer) == reason])} record(s) omitted: {reason}"
            for reason, n in counts.items()]


def _or(words: list[str]) -> str:
    return " or ".join(filter(None, [", ".join(words[:-1]), words[-1]]))


def specs() -> Iterator[IocTypeSpec]:
    """Every registered type, in registration order."""
    return iter(tuple(REGISTRY.values()))


def claimants(value: str) -> tuple[str, ...]:
    """Every type whose detector accepts ``value``, earliest registered first."""
    return tuple(spec.name for spec in specs() if spec.detect(value))
