"""STIX ids of IOC records, computed where the records are stored so the store can index them.

Every id is a UUIDv5 under the project's own namespace (STIX 2.1 section 2.9 permits deterministic ids;
the SCO namespace ``00abedb4-...`` is reserved for cyber-observables), so rebuilding an export never
changes an id. A record's *object id* is the id of the one STIX object it becomes (``exporters.stix``,
TAXII): a ``vulnerability`` for a CVE, an ``indicator`` for every other type. Both backends store it
beside the record, so TAXII ``match[id]`` and the object endpoints are index lookups, not scans.
"""

from __future__ import annotations

import hashlib
import uuid

from store.ioctypes import REGISTRY, Stix

CTIWIRE_NAMESPACE = uuid.UUID("6f7c3a52-8d1e-5b43-9a0e-4c7d2b1e9f30")
_NAMESPACE_BYTES = CTIWIRE_NAMESPACE.bytes


def stable_uuid(*parts: str) -> str:
    """A UUIDv5 under the project namespace: rebuilding an export never changes its ids (STIX 2.1 s. 2.9).

    Equal to ``str(uuid.uuid5(CTIWIRE_NAMESPACE, ":".join(parts)))`` (RFC 4122 s. 4.3), computed without
    building UUID objects: exports make several ids per record, and ``uuid.uuid5`` was their largest cost.
    """
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + ":".join(parts).encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def indicator_id(ioc_type: str, value: str) -> str:
    """The ``indicator`` id of (type, value): UUIDv5 of ``"type:value"``."""
    return f"indicator--{stable_uuid(ioc_type, value)}"


def vulnerability_id(cve: str) -> str:
    """The ``vulnerability`` id of a CVE; spellings differing in case are one vulnerability."""
    return f"vulnerability--{stable_uuid('vulnerability', cve.upper())}"


def attack_pattern_id(technique: str) -> str:
    """The ``attack-pattern`` id of an ATT&CK technique id."""
    return f"attack-pattern--{stable_uuid('attack-pattern', technique.upper())}"


def named_id(stix_type: str, key: str) -> str:
    """The id of an object named by a key of its own: an ``intrusion-set`` by its canonical actor name, a
    ``malware`` family by its name, a ``report`` by its article id (each lowercased: one spelling, one id)."""
    return f"{stix_type}--{stable_uuid(stix_type, key.lower())}"


def object_id(ioc_type: str, value: str) -> str:
    """The id of the record's one STIX object, of the registry's STIX object type: a CVE is a vulnerability
    (STIX 2.1 s. 4.19), an ATT&CK technique an attack-pattern (s. 4.1), the rest indicators (s. 4.7). Not
    unique per record: two spellings of one CVE share a vulnerability id."""
    spec = REGISTRY.get(ioc_type)
    kind = spec.stix.object_type if spec is not None and isinstance(spec.stix, Stix) else "indicator"
    if kind == "vulnerability":
        return vulnerability_id(value)
    return attack_pattern_id(value) if kind == "attack-pattern" else indicator_id(ioc_type, value)
