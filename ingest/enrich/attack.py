"""MITRE ATT&CK techniques of an article: ids as written, and curated behaviour phrases.

Names and tactics come from the catalogue of ``store.attack`` (the installed packages' ATT&CK data,
read once per process). An id counts only when it is a technique of one of its matrices; a
sub-technique stays as written and its parent is never added. Tactic ids (TA0001), software (S0154)
and group ids (G0016) are not techniques.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from ingest.enrich.procedures import detect
from ingest.enrich.resources import required_literals, yaml_data
from store.attack import catalogue
from store.records import MitreTechnique

# Matched on the lowercased text: a case-sensitive scan is about twice as fast as an IGNORECASE one.
_MOBILE = re.compile(r"\b(?:android|ios|iphones?|ipads?|smartphones?|mobile (?:apps?|devices?|phones?|banking))\b")
_ICS = re.compile(r"\b(?:plcs?|scada|ics|hmis?|industrial control|operational technology|programmable logic)\b")
# Characters per mention of mobile or ICS systems an article about them has at least (the tuning set's
# such articles have one per 130-2,800 characters; TRAM's Windows reports that name them, one per 3,200-28,000).
_MATRIX_SPAN = 3000
# How far before the first of its literals a phrase's match can start: the longest run of words a phrase
# allows ahead of its literal is some 20 words, so the scan starts there, not at the article's start.
_REACH = 400
_UPPER_ESCAPE = re.compile(r"\\[A-Z]")  # \S, \W, \D...: lowercasing would change what the phrase means
_ID = re.compile(r"(?<![\w.-])(T\d{4}(?:\.\d{3})?)(?![\w-]|\.\d)")


@cache
def _phrases() -> list[tuple[tuple[str, ...], re.Pattern[str], re.Pattern[str], str]]:
    """(literal prefilter: one of them is in every match, the pattern for the lowercased text, the pattern
    for the text as written, technique id) for every phrase of the table."""
    table: dict[str, list[str]] = yaml_data("attack_phrases.yaml")
    known = catalogue()
    compiled = []
    for technique_id, phrases in table.items():
        if technique_id not in known:
            raise ValueError(f"attack_phrases.yaml: {technique_id} is not an ATT&CK technique")
        for phrase in phrases:
            pattern = re.compile(rf"(?<![\w-])(?:{phrase})(?![\w-])", re.IGNORECASE)
            lower = phrase.lower()
            lowered = pattern if _UPPER_ESCAPE.search(phrase) else re.compile(rf"(?<![\w-])(?:{lower})(?![\w-])")
            compiled.append((required_literals(phrase.lower()), lowered, pattern, technique_id))
    return compiled


@cache
def _variants() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = yaml_data("attack_variants.yaml")
    unknown = {variant for variants in table.values() for variant in variants.values()} - set(catalogue())
    if unknown:
        raise ValueError(f"attack_variants.yaml: unknown techniques {sorted(unknown)}")
    return table


def _matrix(text: str) -> str:
    """``mobile`` or ``ics`` when the article is mainly about such systems, else ``enterprise``.

    Mainly about means two mentions, and one per ``_MATRIX_SPAN`` characters: a long report on a
    Windows intrusion names "Android" or "ICS" in passing, and its techniques stay Enterprise ones.
    """
    lowered = text.lower()
    mobile, ics = len(_MOBILE.findall(lowered)), len(_ICS.findall(lowered))
    if max(mobile, ics) < max(2, len(lowered) / _MATRIX_SPAN):
        return "enterprise"
    return "mobile" if mobile >= ics else "ics"


def technique(technique_id: str, confidence: str) -> MitreTechnique | None:
    """The record of a known technique id, or None."""
    entry = catalogue().get(technique_id)
    return MitreTechnique(technique_id, entry[0], entry[1], confidence) if entry else None


def _family(technique_id: str) -> str:
    return technique_id.split(".", 1)[0]


def _written_and_phrased(text: str, matrix: str) -> dict[str, tuple[MitreTechnique, str]]:
    """Techniques named by id (confidence high) then by behaviour phrase (medium), with what matched."""
    found: dict[str, tuple[MitreTechnique, str]] = {}
    for written in _ID.finditer(text):
        record = technique(written.group(1), "high")
        if record is not None and record.id not in found:
            found[record.id] = (record, "id written in the article")
    lowered = text.lower()
    aligned = len(lowered) == len(text)  # a few characters lowercase to two: then read the text as written
    for literals, on_lowered, as_written, enterprise_id in _phrases():
        technique_id = _variants().get(enterprise_id, {}).get(matrix, enterprise_id)
        if technique_id in found or (first := _first_literal(lowered, literals)) < 0:
            continue
        match = on_lowered.search(lowered, max(0, first - _REACH)) if aligned else as_written.search(text)
        record = technique(technique_id, "medium") if match else None
        if match and record is not None:
            found[technique_id] = (record, f"phrase: {text[match.start() : match.end()]}")
    return found


def _first_literal(lowered: str, literals: tuple[str, ...]) -> int:
    """Where the first of a phrase's literals stands in the text (0 when it has none, -1 when none is there)."""
    if not literals:
        return 0
    return min((index for literal in literals if (index := lowered.find(literal)) >= 0), default=-1)


def techniques_with_evidence(text: str, sentences: Sequence[str] = ()) -> list[tuple[MitreTechnique, str]]:
    """Every technique of an article with its evidence: ids, phrases, then the procedure classifier.

    The classifier (``procedures``, confidence low) reads the prose ``sentences`` of Enterprise articles
    only, and adds a technique only when nothing of its family (the technique, its parent or a sibling
    sub-technique) was found otherwise: an id or a phrase is the more specific witness.
    """
    matrix = _matrix(text)
    found = _written_and_phrased(text, matrix)
    if sentences and matrix == "enterprise":
        families = {_family(technique_id) for technique_id in found}
        for evidence in detect(list(sentences)):
            record = technique(evidence.technique_id, "low")
            if record is not None and _family(record.id) not in families:
                families.add(_family(record.id))
                found[record.id] = (record, f"classifier {evidence.score:.2f}: {evidence.sentence}")
    # A phrase for a whole technique adds nothing beside a sub-technique of it found in the same text
    # ("injects it into ... using process hollowing"); ids written by the author always stay.
    return [
        (record, why)
        for record, why in found.values()
        if record.confidence == "high" or not any(other.startswith(record.id + ".") for other in found)
    ]


def extract_techniques(text: str, sentences: Sequence[str] = ()) -> list[MitreTechnique]:
    """The techniques of ``techniques_with_evidence``, without their evidence."""
    return [record for record, _ in techniques_with_evidence(text, sentences)]
