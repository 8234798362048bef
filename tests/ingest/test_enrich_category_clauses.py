"""LABELLING.md's category clauses read from an article's title, through ``enrich()``: a regulator's or
government's act is a compliance story, and an actor the body names is the subject when the title writes
its name (independent of the bench sets)."""

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
