"""CVE ids, ATT&CK techniques and threat actors, rule by rule."""

from __future__ import annotations

import re

import pytest

from ingest.enrich import extract_cves
from ingest.enrich.actors import extract_actors
from ingest.enrich.attack import catalogue, extract_techniques


def ids(text: str) -> list[str]:
    return [technique.id for technique in extract_techniques(text)]


@pytest.mark.parametrize("written", ["CVE-2024-3400", "cve-2024-3400", "Cve-2024-3400", "CVE\u20112024\u20113400",
                                     "CVE\u20132024\u20133400", "CVE\u22122024\u22123400", "CVE 2024-3400"])
def test_cve_any_casing_and_unicode_dashes(written: str) -> None:
    assert extract_cves(f"Attackers exploit {written} in firewalls.") == ["CVE-2024-3400"]


def test_cves_unique_in_order_and_long_ids() -> None:
    text = "CVE-2025-1234567 then CVE-2021-44228, cve-2021-44228 again, and XCVE-2020-1111 or CVE-2020-123."
    assert extract_cves(text) == ["CVE-2025-1234567", "CVE-2021-44228"]


def test_technique_ids_of_every_matrix_with_names_and_tactics() -> None:
    found = {t.id: t for t in extract_techniques("Seen: T1059.001 (enterprise), T1660 (mobile), T0836 (ICS).")}
    assert set(found) == {"T1059.001", "T1660", "T0836"}
    assert found["T1059.001"].name == "PowerShell" and found["T1059.001"].tactic == "execution"
    assert found["T0836"].name == "Modify Parameter"
    assert all(t.confidence == "high" for t in found.values())


def test_sub_technique_as_written_and_parent_never_added() -> None:
    assert ids("The actor used T1566.001 in the first wave.") == ["T1566.001"]
    assert ids("Both T1566 and T1566.002 appear.") == ["T1566", "T1566.002"]


def test_non_technique_ids_are_ignored() -> None:
    assert ids("Tactic TA0001, software S0154, group G0016, made-up T9999 and T1059.999, campaign C0001.") == []


def test_behaviour_phrase_table() -> None:
    found = {t.id: t for t in extract_techniques("The crew relied on password spraying and Kerberoasting.")}
    assert set(found) == {"T1110.003", "T1558.003"}
    assert found["T1110.003"].confidence == "medium" and found["T1110.003"].name == "Password Spraying"


def test_phrase_parent_gives_way_to_its_sub_technique() -> None:
    assert ids("The loader injects the payload into a process using process hollowing.") == ["T1055.012"]


def test_tool_names_and_generic_words_are_not_techniques() -> None:
    assert ids("Operators ran Mimikatz, PsExec, Cobalt Strike and PowerShell; phishing and malware and exploits.") == []


def test_mobile_and_ics_articles_get_their_matrix_variant() -> None:
    mobile = "The Android trojan records the screen of the smartphone while banking apps run on Android."
    assert ids(mobile) == ["T1513"]
    assert ids("The desktop stealer records the screen every minute.") == ["T1113"]
    assert ids("The PLC kept default credentials; the SCADA HMI was exposed.") == ["T0812"]


def test_catalogue_covers_the_three_matrices() -> None:
    known = catalogue()
    assert known["T1110.003"][0] == "Password Spraying"
    assert {"T1404", "T0800", "T0883"} <= set(known)


@pytest.mark.parametrize("text, expected", [
    ("APT28, also known as Fancy Bear or Sofacy, struck again.", ["apt28"]),
    ("Midnight Blizzard, formerly Nobelium, and Cozy Bear are one group.", ["apt29"]),
    ("Volt Typhoon and Sandworm were both named.", ["volt typhoon", "sandworm"]),
    ("The Lazarus hackers and TA505 returned.", ["lazarus group", "ta505"]),
    ("The LockBit and Cl0p gangs, and CyberAv3ngers.", ["lockbit", "cl0p", "cyber av3ngers"]),
])
def test_actor_aliases_fold_to_canonical_lowercase(text: str, expected: list[str]) -> None:
    assert extract_actors(text) == expected


@pytest.mark.parametrize("text", [
    "Operators deployed Cobalt Strike beacons on the servers.",
    "The silence after the outage worried the IT team; Mercury and lead levels were fine.",
    "Users play games; the royal family; a hive of activity; the tick of a clock.",
    "volt typhoon and fancy bear in lower case are not written as names.",
    "The Snake malware sample and the Machete tool were analysed.",
    "Group 3 and Group 8 results; UPS delivered the parcel; SEA shipping.",
])
def test_common_words_tools_and_lowercase_are_not_actors(text: str) -> None:
    assert extract_actors(text) == []


def test_ambiguous_names_with_actor_wording() -> None:
    assert extract_actors("The Silence group hit banks, and the Medusa ransomware gang followed.") == [
        "silence group", "medusa"]


def test_the_phrase_table_names_each_technique_once() -> None:
    """PyYAML keeps the last of two equal keys without a word: a repeated id would drop phrases silently."""
    from ingest.enrich.resources import read_text

    ids = re.findall(r"^(T\d{4}(?:\.\d{3})?):", read_text("attack_phrases.yaml"), re.MULTILINE)
    assert len(ids) == len(set(ids))
