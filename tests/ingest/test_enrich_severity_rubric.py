"""Severity rules read the rubric's clauses in wordings the leads and calibration articles showed missing
(bench/LABELLING.md: destructive attacks and attacks on physical processes are critical; news with no live
threat is low), and the weighing that joins them to the lead classifier."""

from __future__ import annotations

import re

import pytest

from ingest.enrich import enrich
from ingest.enrich.resources import yaml_data
from store.records import severity_label


@pytest.mark.parametrize(
    "title, body, level",
    [
        # "destructive attacks": wiping told in the present tense, machines counted with a thousands separator
        (
            "Protestware in npm library wipes files on developers' machines",
            "A maintainer added code that wipes files on machines in two countries when the package is installed.",
            "critical",
        ),
        (
            "ESXi locker destroyed virtual machines at a hosting firm",
            "The attackers destroyed 1,800 virtual machines after they broke into the management network.",
            "critical",
        ),
        # "attacks on critical infrastructure or physical processes": heating, breakers, fuel gauges
        (
            "Malware cut heating in apartment blocks",
            "Attackers tampered with heating controllers and cut heating to 600 buildings for two days.",
            "critical",
        ),
        (
            "Hacktivists tamper with fuel tank gauges at petrol stations",
            "The group changed the readings of fuel tank gauges at dozens of petrol stations.",
            "critical",
        ),
        # "news ... with no live threat": arrests, sanctions and decryptors, unless the title says it goes on
        (
            "Police arrest two suspects behind the Nightowl ransomware",
            "Officers searched four homes and seized servers the gang used to host its leak site.",
            "low",
        ),
        (
            "Free decryptor released for Murkcrypt ransomware victims",
            "Victims whose files were encrypted by the defunct ransomware can now recover them without paying.",
            "low",
        ),
        (
            "Negotiator for the Kestrel Lock gang arrested as the group keeps posting new victims",
            "The ransomware gang has listed nine companies this week and encrypted the file servers of a law firm.",
            "medium",
        ),  # not low: the threat goes on (the arrest in the lead still holds it below high)
    ],
)
def test_the_rules_read_these_rubric_clauses(title: str, body: str, level: str) -> None:
    result = enrich(title, body)
    assert f"rules: {level}" in result.severity_reasons
    assert result.severity_reasons[0] == f"rubric level: {severity_label(result.severity_score)}"


def test_the_reasons_say_the_level_was_weighed_from_both_readings() -> None:
    result = enrich(
        "Police arrest two suspects behind the Nightowl ransomware",
        "Officers searched four homes and seized servers the gang used to host its leak site.",
    )
    assert result.severity_reasons[1] == "rules: low"
    assert result.severity_reasons[2].startswith("title and lead read as ")
    assert result.severity_reasons[3] == "level weighed from both readings and the findings"


def test_every_signal_cue_is_written_in_lower_case() -> None:
    """The signals read lower-cased text with case-sensitive patterns, so a capital letter in a cue (outside
    an escape such as ``\\S``) would never match."""
    for name, entry in yaml_data("severity.yaml")["signals"].items():
        literal = re.sub(r"\\.", "", entry["cue"])
        assert literal == literal.lower(), name


def test_signals_are_found_whatever_the_case_of_the_text() -> None:
    assert enrich("WIPER HITS UTILITY", "THE WIPER DESTROYED SERVERS AT A WATER UTILITY.").severity_reasons[1] == (
        "rules: critical"
    )
