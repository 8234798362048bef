"""MISP galaxy clusters shipped in ``pymispgalaxies``: threat-actor names, aliases and malware families.

Read by ingest (actor extraction folds the threat-actor galaxy's synonyms into its canonical, lowercased
``value``) and by the STIX export (an actor's ``intrusion-set`` takes the galaxy's spelling and
synonyms; its ``malware`` families come from the ransomware and Malpedia clusters). Each cluster is
parsed once per process.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

# Clusters whose entries are malware families (MISP galaxy "ransomware" and "malpedia").
FAMILY_CLUSTERS: tuple[str, ...] = ("ransomware", "malpedia")


@dataclass(frozen=True, slots=True)
class GalaxyEntry:
    """One cluster value: its name as the galaxy spells it, its synonyms, and what it ``uses``."""

    value: str
    synonyms: tuple[str, ...]
    uuid: str
    uses: tuple[str, ...]  # dest-uuid of each "uses" relation


@cache
def _clusters_dir() -> Path:
    """The package's cluster files, found without importing ``pymispgalaxies``: its import loads and
    checks every galaxy, about five seconds, where an export needs three files."""
    spec = importlib.util.find_spec("pymispgalaxies")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("pymispgalaxies")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "misp-galaxy" / "clusters"


def cluster_values(name: str) -> list[dict[str, Any]]:
    """The raw ``values`` of the named cluster file (every field the galaxy has)."""
    values: list[dict[str, Any]] = json.loads((_clusters_dir() / f"{name}.json").read_text(encoding="utf-8"))["values"]
    return values


@cache
def cluster(name: str) -> tuple[GalaxyEntry, ...]:
    """Every entry of the named cluster (``threat-actor``, ``ransomware``...), in the galaxy's order."""
    values = cluster_values(name)
    return tuple(
        GalaxyEntry(
            item["value"],
            tuple(item.get("meta", {}).get("synonyms", [])),
            item["uuid"],
            tuple(r["dest-uuid"] for r in item.get("related", []) if r.get("type") == "uses"),
        )
        for item in values
    )


@cache
def _by_name(name: str) -> dict[str, GalaxyEntry]:
    """Lowercased value, then lowercased synonym -> entry; a value wins over another entry's synonym."""
    index: dict[str, GalaxyEntry] = {}
    for entry in cluster(name):
        for synonym in entry.synonyms:
            index.setdefault(synonym.lower(), entry)
    index.update({entry.value.lower(): entry for entry in reversed(cluster(name))})
    return index


@cache
def _families_by_uuid() -> dict[str, str]:
    return {entry.uuid: entry.value for name in FAMILY_CLUSTERS for entry in cluster(name)}


def threat_actor(canonical: str) -> GalaxyEntry | None:
    """The threat-actor galaxy entry of a canonical (lowercase) actor name, if the galaxy has it."""
    return _by_name("threat-actor").get(canonical.lower())


def actor_families(canonical: str) -> list[str]:
    """Malware families an actor runs: the ransomware family its name is the brand of ("lockbit" runs
    LockBit), then the families its threat-actor entry ``uses``, each once (by lowercase name)."""
    brand = _by_name("ransomware").get(canonical.lower())
    entry = threat_actor(canonical)
    used = [_families_by_uuid().get(uuid) for uuid in (entry.uses if entry else ())]
    found: dict[str, str] = {}
    for name in (brand.value if brand else None, *used):
        if name:
            found.setdefault(name.lower(), name)
    return list(found.values())


@cache
def _sponsors_by_uuid() -> dict[str, str]:
    return {
        item["uuid"]: sponsor
        for item in cluster_values("threat-actor")
        if (sponsor := (item.get("meta") or {}).get("cfr-suspected-state-sponsor"))
    }


def state_sponsor(canonical: str) -> str | None:
    """The state the threat-actor galaxy names as the actor's suspected sponsor (its
    ``cfr-suspected-state-sponsor``: "Russian Federation" for APT28), if it names one."""
    entry = threat_actor(canonical)
    return _sponsors_by_uuid().get(entry.uuid) if entry else None


def display_name(canonical: str) -> str:
    """The actor's name as the galaxy spells it (threat-actor, else ransomware brand), else as stored."""
    entry = threat_actor(canonical) or _by_name("ransomware").get(canonical.lower())
    return entry.value if entry else canonical
