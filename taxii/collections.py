"""The fixed TAXII collections: each one is a set of IOC types (spec, "TAXII collection").

The ids are the spec's example collection ids and are what clients put in the objects path. Every
collection is read-only (TAXII 2.1 section 5.2.1: ``can_write`` false) and serves STIX 2.1 only.
The listing order is the declaration order, so ``GET collections/`` always answers the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from exporters.stix_objects import TLP_CLEAR, identity_object
from store.ioctypes import Stix, mapping, specs
from store.query import IocFilters
from store.records import Feed
from taxii.media import STIX_21

ALL_IOCS = "all-iocs"
CONTEXT = "ctiwire-context"


def stix_type_of(ioc_type: str) -> str:
    """The STIX object type the exporter builds for records of ``ioc_type`` (the registry's ``stix``: CVE
    records are ``vulnerability`` objects, STIX 2.1 section 4.19; ATT&CK techniques ``attack-pattern``,
    section 4.1; every other type an ``indicator`` with a STIX pattern, section 4.7)."""
    return mapping(ioc_type, "stix", Stix).object_type


@dataclass(frozen=True, slots=True)
class TaxiiCollection:
    """One collection: an id for the URL path, a title, and the IOC types it holds (every type for
    all-iocs, else the types whose registry entry names this collection). A saved feed's collection holds
    the records its ``filters`` select, and only its owner's keys see it. A collection with ``fixed``
    objects holds those and no record: what every record's object refers to (STIX 2.1 s. 3.2,
    ``created_by_ref`` and ``object_marking_refs``), so a TAXII client resolves every reference."""

    id: str
    title: str
    description: str
    filters: IocFilters | None = None
    fixed: tuple[dict[str, Any], ...] = ()  # objects held whatever the records (the context collection)
    stored: bool = False  # and the stored context objects around the records (store.stix_context)

    @property
    def ioc_types(self) -> tuple[str, ...]:
        if self.filters is not None:
            return self.filters.types or tuple(s.name for s in specs())
        return tuple(s.name for s in specs() if self.id == ALL_IOCS or s.taxii == self.id)

    def resource(self) -> dict[str, Any]:
        """The TAXII 2.1 collection resource (section 5.2.1)."""
        return {
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "can_read": True,
            "can_write": False,
            "media_types": [STIX_21],
        }


CONTEXT_TEXT = (
    "The objects around the indicators, vulnerabilities and attack patterns: the ctiwire identity "
    "(created_by_ref) and the TLP:CLEAR marking definition (object_marking_refs), then one report per article "
    "that brought indicators (object_refs: the objects of its indicators and its threat actors), an intrusion-set "
    "per threat actor (MISP galaxy names and aliases), a malware per family the galaxy says an actor runs, a "
    "threat-actor (nation-state) per state the galaxy names as an actor's suspected sponsor, and the "
    "relationships: indicator indicates intrusion-set, intrusion-set uses malware and attack-pattern, intrusion-set "
    "targets vulnerability, intrusion-set attributed-to threat-actor. Poll it beside all-iocs, which holds every "
    "object they refer to (beside a narrower "
    "collection or a saved feed, some references name objects that collection leaves out). Each version is "
    "added when ctiwire stored it (a report whose article changed is a new "
    "version, its modified later); not limited by the tier lookback."
)
COLLECTIONS: tuple[TaxiiCollection, ...] = (
    TaxiiCollection(ALL_IOCS, "All IOCs", "Every indicator, CVE and ATT&CK technique record, oldest first by "
                    "date added."),
    TaxiiCollection("ip-addresses", "IP addresses", "IPv4 and IPv6 address indicators."),
    TaxiiCollection("file-hashes", "File hashes", "MD5, SHA-1, SHA-256 and SHA-512 file hash indicators."),
    TaxiiCollection("domains", "Domains", "Domain name indicators."),
    TaxiiCollection("urls", "URLs", "URL indicators."),
    TaxiiCollection("cves", "CVEs", "Vulnerabilities (CVE ids) mentioned by the aggregated reporting."),
    TaxiiCollection("attack-patterns", "ATT&CK techniques", "MITRE ATT&CK techniques the aggregated reporting "
                    "describes, as attack-pattern objects."),
    TaxiiCollection(CONTEXT, "ctiwire context", CONTEXT_TEXT, fixed=(identity_object(), dict(TLP_CLEAR)), stored=True),
)
BY_ID: MappingProxyType[str, TaxiiCollection] = MappingProxyType({c.id: c for c in COLLECTIONS})


def feed_collection(feed: Feed) -> TaxiiCollection:
    """The collection of a saved feed: its id is the feed's (a UUID, never a fixed collection's id)."""
    chosen = ", ".join(f"{name} {'/'.join(values)}" for name, values in feed.filters.items()) or "no filters"
    return TaxiiCollection(feed.id, feed.name, f"Saved feed ({chosen}): the IOC records it selects, oldest first "
                           "by date added.", IocFilters.from_params(feed.filters))
