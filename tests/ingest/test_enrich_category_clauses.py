"""LABELLING.md's category clauses read from an article's title, through ``enrich()``: a regulator's or
government's act is a compliance story; an actor the body names is the subject when the title writes its
name; a title telling the recovery or the forensics of an incident is an incident-response story
(independent of the bench sets)."""

from __future__ import annotations

from ingest.enrich import enrich

_SANCTIONS_BODY = (
    "The Treasury Department sanctioned six people it says develop and sell the Moth infostealer, a "
    "malware-as-a-service kit that steals browser passwords, cookies and crypto wallets and uploads them to a "
    "log market. The stealer is spread through cracked software and fake updates, and its logs have been used "
    "to break into corporate networks. The designation freezes the members' assets and bars firms from paying "
    "them, including for stolen logs. The department warned that buying logs or paying ransom to the group may "
    "breach sanctions."
)


def test_a_regulators_act_in_the_title_is_a_compliance_story() -> None:
    # "compliance: laws, regulation, fines, standards, policy": the stealer is what the sanctions are
    # about, not the article's topic.
    title = "Treasury sanctions six members of the crew behind the Moth stealer and its log market"
    assert enrich(title, _SANCTIONS_BODY).category == "compliance"


_ACTOR_BODY = (
    "Lark Mantis, a state-sponsored espionage group we have tracked since 2021, is delivering a new loader "
    "through trojanised installers of a popular VPN client. The loader decrypts a backdoor that takes "
    "screenshots, logs keystrokes and uploads documents to hxxps://vpn-update-mirror[.]com/sync. We found it at "
    "four defence contractors in Europe. The backdoor persists through a scheduled task and a registry run key."
)


def test_an_actor_the_body_names_is_the_subject_when_the_title_writes_its_name() -> None:
    # "A state-actor campaign is threat-intel": the title writes the name without actor wording, the
    # body introduces it as a group; the loader and the backdoor are the group's means.
    result = enrich(
        "Lark Mantis's new loader backdoors defence contractors through trojanised VPN installers", _ACTOR_BODY
    )
    assert "lark mantis" in result.threat_actors
    assert result.category == "threat-intel"


_RECOVERY_BODY = (
    "Harrowby district council says it has brought back its payments and housing systems, four weeks after "
    "ransomware encrypted most of its servers. Staff are still working from paper forms for planning "
    "applications. The council refused to pay the ransom and is rebuilding its network from clean images, with "
    "help from the national cyber centre. Backups kept offline were intact, which let it restore the payroll "
    "system first. The council estimates the attack will cost it £2.4 million."
)


def test_a_title_telling_the_recovery_is_an_incident_response_story() -> None:
    # "incident-response: incident-response write-ups, forensics, lessons learned, recovery": the attack is
    # weeks old; the story is the rebuilding.
    title = "Four weeks after the ransomware attack, Harrowby district council is still restoring its systems"
    assert enrich(title, _RECOVERY_BODY).category == "incident-response"
