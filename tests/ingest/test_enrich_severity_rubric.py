"""Severity rules read the rubric's clauses in wordings the leads and calibration articles showed missing
(bench/LABELLING.md: destructive attacks, ransomware that stopped operations at scale, flaws exploited in the
wild with pre-auth code execution or mass theft, and attacks on physical processes are critical; news with no
live threat is low), and the weighing that joins them to the lead classifier."""

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
        # "ransomware that destroyed operations at scale": the sites themselves stopped, systems knocked out at
        # every site, or the production lines of several plants told as stopped
        (
            "Ransomware halts grain terminals at Sundby Port Group",
            "Loading stopped for five days while the operator restored its scheduling servers from backups.",
            "critical",
        ),
        (
            "Dental chain turns patients away",
            "Ransomware knocked out booking and imaging systems at all eleven of its clinics on Monday.",
            "critical",
        ),
        (
            "How we brought a bakery group back after an extortion attack",
            "The ransomware ran overnight; by morning production lines in four plants had stopped.",
            "critical",
        ),
        # "a flaw under active exploitation giving pre-auth remote code execution": exploitation told as a wave
        # or as what a group does, not only as "exploited in the wild"
        (
            "Exploitation wave hits Quarrel file-transfer servers",
            "Attackers chain an authentication bypass with a command injection to run commands on the servers.",
            "critical",
        ),
        (
            "Tin Heron mass-exploits Larkspur VPN bug, steals mail at 300 organisations",
            "The group has stolen mail from more than 300 organisations since the start of the month.",
            "critical",
        ),
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


def test_operations_halted_without_an_attack_are_no_critical_threat() -> None:
    """A stoppage at several plants is the rubric's "destroyed operations at scale" only when ransomware or a
    confirmed compromise stopped them (a storm or a strike is no threat at all)."""
    result = enrich("Storm halts production at three Velden plants", "Flooding stopped the lines in three plants.")
    assert "rules: critical" not in result.severity_reasons
