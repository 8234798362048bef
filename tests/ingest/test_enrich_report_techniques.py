"""ATT&CK techniques on real report prose: words that only seem to name a technique give none, wording
reports use for a technique gives it, and MITRE TRAM 2's annotated report sentences train the
classifier (kept by report, with TRAM's licence beside them)."""

from __future__ import annotations

import json

import pytest

from ingest.enrich import procedures
from ingest.enrich.attack import extract_techniques, techniques_with_evidence
from ingest.enrich.textprep import build_document, prose_sentences


def techniques(text: str) -> set[str]:
    """What the article's whole technique extractor (ids, phrases, classifier) finds in ``text``."""
    document = build_document("Threat report", text)
    return {record.id for record, _ in techniques_with_evidence(document.text, prose_sentences(document))}


@pytest.mark.parametrize(
    "sentence, spurious",
    [
        # time idioms are no System Time Discovery
        ("At the same time, the operators rotated their infrastructure.", "T1124"),
        ("For the time being, the group appears to be focused on logistics firms.", "T1124"),
        # an image link is no web protocol traffic
        ("![](https://example.com/images/figure3.png)", "T1071.001"),
        # a figure the reader is pointed at is no Screen Capture
        ("As shown in the screenshot below, the panel lists every victim.", "T1113"),
        ("As seen in the screenshots above, the operator panel is simple.", "T1113"),
        ("We took a screenshot of the admin panel before it went offline.", "T1113"),
        # what a loader carries encrypted is no Data Encrypted for Impact
        ("The loader carries encrypted data in its resource section and unpacks it at run time.", "T1486"),
        ("Its configuration was encrypted with RC4 and its traffic is encrypted to the servers.", "T1486"),
        ("Ransomware groups deploy ransomware operations under many names.", "T1486"),
        ("They were contained before they could deploy ransomware.", "T1486"),
        ("No servers were encrypted, and backups were intact.", "T1486"),
        # a device that was not restarted, and an administrator's restart, are no System Shutdown/Reboot
        ("The implant survived only because the appliance had not rebooted the device since March.", "T1529"),
        ("Administrators should restart the service after applying the patch.", "T1529"),
        ("Related samples were found on multiple other machines in the same subnet.", "T1018"),
        ("The script lists Active Directory groups and domain computers.", "T1083"),
        # an encoded command is the interpreter's (the project's labels), and a denied obfuscation is none
        ("Through the web shell the operators ran encoded PowerShell commands.", "T1027"),
        ("Nothing in the install script is obfuscated beyond Base64.", "T1027"),
        ("Administrators can download the fixed release over HTTPS from the vendor.", "T1071.001"),
        # an account named without anyone signing in with it is no Valid Accounts
        ("The researchers logged in to the sandbox to watch the sample.", "T1078"),
    ],
)
def test_incidental_words_give_no_technique(sentence: str, spurious: str) -> None:
    assert spurious not in techniques(sentence)


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("The spear phishing carried out an impersonation of a regional bank's compliance team.", "T1566"),
        ("The workbook relies on XL4 macros to download and execute the next stage.", "T1059"),
        ("The actor used WMI to start the payload on two more hosts.", "T1047"),
        ("The dropper downloads the file from 203.0.113.7 and saves it in the temp folder.", "T1105"),
        ("The intruders utilize vulnerabilities like a Fortinet buffer overflow to get in.", "T1190"),
        # ransomware's impact told without "encrypted files"
        ("Within an hour the affiliate pushed the Frostline encryptor to 60 hosts.", "T1486"),
        ("Eleven workstations were encrypted before the help desk pulled the network cable.", "T1486"),
        ("The crew encrypted two racks of production servers overnight.", "T1486"),
        ("The operators then deployed BlackCat ransomware across the domain.", "T1486"),
        # a valid account told as signing in with someone's credentials
        ("The intruder signed in to the clinic's webmail with the password of a receptionist.", "T1078"),
        ("They reached the portal using the account of a former contractor.", "T1078"),
        ("Credentials taken from a build server were later used to access the cloud tenant.", "T1078"),
        # exfiltration over the control channel told as sending stolen data to the operators' server
        ("The implant compresses the documents and uploads them to its control server.", "T1041"),
        ("Harvested passwords are posted to the operator's panel every ten minutes.", "T1041"),
        # a stealer's haul: cookies among what it takes, its loot zipped, a victim who runs the file
        ("The stealer reads saved logins, card data and cookies from every Chromium profile.", "T1539"),
        ("A reverse proxy captured the manager's session cookie after the MFA prompt.", "T1539"),
        ("It zips everything into the temp folder before the upload.", "T1560"),
        ("The gathered files are compressed before they leave the network.", "T1560"),
        ("The lure works only if the user opens the installer and grants it admin rights.", "T1204.002"),
        ("An accountant opened a OneNote file attached to a fake invoice.", "T1204.002"),
        # web protocols for control and tools pulled in, told in the verbs reports use
        ("Every few minutes the backdoor reports to its controller over HTTPS.", "T1071.001"),
        ("The stager then fetches a 64-bit loader (packed with UPX) from a rented server.", "T1105"),
        ("After the exploit, the shell script fetches the final Mirai payload and runs it.", "T1105"),
        # browsers' saved passwords, and links sent by mail
        ("The sample steals browser passwords and wallet files, then quits.", "T1555.003"),
        ("It reads stored logins, tokens and autofill entries from Chromium-based browsers.", "T1555.003"),
        ("Each e-mail, styled as a parcel notice, contained a link to a cloned login page.", "T1566.002"),
        # discovery, cleanup and persistence told with the words between the verb and its object
        ("Once loaded, the module enumerates all running processes and looks for backup agents.", "T1057"),
        ("Before leaving, the operators cleared the Security and Application event logs on both servers.", "T1070.001"),
        ("On the Linux hosts the script installed a cron entry that restarts the miner hourly.", "T1053.003"),
        ("The intruders created a new local administrator account named helpdesk_svc.", "T1136.001"),
        ("From the jump server they created a new domain account and added it to Domain Admins.", "T1136.002"),
        ("Within minutes the attacker created a new IAM user with console access.", "T1136.003"),
        ("They also created a second access key for the deployment user.", "T1098.001"),
        ("With domain admin rights the group created a Group Policy Object that launched the wiper.", "T1484.001"),
        ("The recon batch file ran whoami, ipconfig /all and net localgroup administrators.", "T1069.001"),
        # remote access, tools under other names, mail collected from servers
        ("The attacker signed in to the company's SSL VPN with a contractor's password.", "T1133"),
        ("An operator connected to the engineering workstation over VNC late at night.", "T1021.005"),
        ("The operators ran a copy of AdFind, renamed to svchost32.exe, from the temp folder.", "T1036.003"),
        ("Over two weeks the actor exported the mailboxes of the finance team from Exchange.", "T1114.002"),
        ("The attacker listed all S3 buckets in the account and copied two of them.", "T1619"),
        # code hidden or run on the way in, and attachments named by their file type
        ("The dropper is packed with UPX and carries its configuration in the overlay.", "T1027.002"),
        ("The second stage is a heavily obfuscated batch file.", "T1027"),
        ("The package's install hook runs an obfuscated JavaScript file as soon as it is installed.", "T1059.007"),
        ("The campaign relied on malicious OneNote attachments sent to accounts payable staff.", "T1566.001"),
        ("A clerk opened a ZIP archive attached to an e-mail about an overdue invoice.", "T1566.001"),
        ("Affiliates now ship an EDR killer with every intrusion.", "T1562.001"),
        # a stealer's screenshot and its loot sent through a chat service's bot
        ("On first run it takes a screenshot of the desktop and saves it beside the logs.", "T1113"),
        ("The archive is then uploaded to the operator through a Telegram bot.", "T1567"),
        # the registry changed, code kept encoded, the host described and its files listed
        ("The batch file runs reg add to turn off the firewall notifications.", "T1112"),
        ("The installer sets several registry values that hide the service from the control panel.", "T1112"),
        ("The shortcut starts a Base64-encoded PowerShell command that pulls the loader.", "T1027"),
        ("The attachment is a Word document with obfuscated VBA macros.", "T1027"),
        ("After start-up the implant collects basic information about the infected machine.", "T1082"),
        ("The bot steals system information and saved browser history.", "T1082"),
        ("A worker thread enumerates files and folders on every mapped drive.", "T1083"),
        # code injected into other processes, results sent back over the control channel, payloads decoded
        ("The loader injects the decrypted DLL into a legitimate svchost.exe process.", "T1055"),
        ("The backdoor returns the output of each command to its C2 server.", "T1041"),
        ("Harvested files are exfiltrated over the existing C&C channel in small chunks.", "T1041"),
        ("It starts by decrypting the shellcode with a hard-coded XOR key.", "T1140"),
        ("The stager decodes the next-stage script and runs it in memory.", "T1140"),
        ("After its checks pass, the stealer downloads three modules from an attacker-controlled server.", "T1105"),
        # a wiper's work, tools carried between hosts, and the network and domain mapped
        ("The payload overwrites the first 4 KB of every file on local and mapped drives.", "T1485"),
        ("The attack wiped some 600 of the company's workstations and servers.", "T1485"),
        ("Once the disks are destroyed, it forces an immediate reboot through the Windows API.", "T1529"),
        ("The batch file deletes itself and reboots the machine after ten seconds.", "T1529"),
        ("The operators copied the encryptor over SMB to the ProgramData folder of each server.", "T1570"),
        ("A scheduled task copies the payload from the NETLOGON share and runs it.", "T1570"),
        ("The beacon was transferred to the file server through the admin$ share.", "T1570"),
        ("The implant can read, write and enumerate registry keys on request.", "T1012"),
        ("It checks the registry keys of VMware Tools to detect a sandbox.", "T1012"),
        ("They queried Active Directory for a list of servers and workstations.", "T1018"),
        ("AdFind queries listed the domain groups and their members.", "T1069.002"),
        ("The beacon sends the current username and the domain name in its first request.", "T1033"),
        ("It collects the username, computer name and OS build into a JSON blob.", "T1033"),
        ("Command 7 returns a list of running processes with their PIDs.", "T1057"),
        # API calls named, the control channel's cipher, proxied sessions, folders walked, the registry written
        ("The dropper starts the payload with the CreateProcessW API function.", "T1106"),
        ("It resolves and calls Windows API functions by hash to avoid static imports.", "T1106"),
        ("All C2 traffic is encrypted with RC4 using a key derived from the bot ID.", "T1573.001"),
        ("All beacons are AES-encrypted with a per-host key.", "T1573.001"),
        ("The beacon was used to proxy RDP traffic to the file server.", "T1090"),
        ("The operator's session was proxied through a compromised router in Ohio.", "T1090"),
        ("The stealer recursively searches all user folders for wallet files.", "T1083"),
        ("A module sends back a directory listing of each fixed drive.", "T1083"),
        ("It writes the path of the loader to the registry key used by the settings page.", "T1112"),
        ("The installer deletes the registry values that record the first run.", "T1112"),
        ("The survey script records hardware information and the OS architecture.", "T1082"),
        # encoded and obfuscated code, raw sockets, the network settings read, archives made with a tool
        ("The second stage hides in a Base64-encoded blob inside the HTML page.", "T1027"),
        ("The web shells dropped on the servers were heavily obfuscated.", "T1027"),
        ("The implant connects to its C2 server over raw TCP on port 8443.", "T1095"),
        ("It reads the network adapter details and the local IP address of the host.", "T1016"),
        ("The staged documents were compressed with WinRAR into split archives.", "T1560.001"),
        ("The operators set up an SSH tunnel from the jump host to their server.", "T1572"),
        ("Using that account, the intruders moved to the backup server over RDP.", "T1078"),
    ],
)
def test_report_wording_gives_its_technique(sentence: str, expected: str) -> None:
    """By the phrase table alone (no sentence for the classifier), so it holds whatever the model learns."""
    assert expected in {record.id for record in extract_techniques(sentence)}


def test_ransomware_that_encrypted_files_is_still_data_encrypted_for_impact() -> None:
    assert "T1486" in techniques("The affiliates encrypted the servers of the hospital on Sunday.")
    assert "T1486" in techniques("The ransomware encrypted files on every reachable share.")


@pytest.mark.parametrize(
    "sentence",
    [
        "The review found no records had been deleted or modified.",
        "Investigators saw no bulk downloads from the storage account.",
        "None of the file servers were encrypted.",
        "Nothing in the install script is obfuscated beyond base64.",
    ],
)
def test_a_clause_that_denies_a_behaviour_gives_no_clause_to_read(sentence: str) -> None:
    assert procedures.clauses(sentence) == []


def test_the_clauses_of_a_denying_sentence_that_deny_nothing_are_still_read() -> None:
    sentence = "No ransom note was left, but the intruders deleted the volume shadow copies on both servers."
    assert procedures.clauses(sentence) == ["but the intruders deleted the volume shadow copies on both servers."]
    idiom = "No matter which account it runs under, the loader injects its payload into explorer.exe."
    assert idiom in procedures.clauses(idiom)


def test_the_classifier_reads_a_sentence_without_its_incidental_words() -> None:
    assert procedures.clauses("![](https://example.org/a.png)") == []
    read = procedures.clauses("As seen in the screenshot below, the tool dumps LSASS memory.")
    assert read and not any("screenshot" in clause for clause in read)
    assert procedures.clauses("At the same time, it deletes shadow copies.") == ["it deletes shadow copies."]


def test_tram_sentences_are_kept_by_report_with_the_licence() -> None:
    data = json.loads(procedures.TRAM.read_text(encoding="utf-8"))
    reports = data["reports"]
    assert len(reports) > 140
    labels = {label for items in reports.values() for label, _ in items}
    assert len(labels) > 70 and all(label.startswith("T") for label in labels)
    assert "Apache License" in (procedures.TRAM.parent / "LICENSE.txt").read_text(encoding="utf-8")
    assert (procedures.TRAM.parent / "NOTICE.txt").exists()


def test_tram_training_sentences_leave_out_the_reports_asked_for() -> None:
    texts, labels = procedures.tram_examples()
    name = sorted(json.loads(procedures.TRAM.read_text(encoding="utf-8"))["reports"])[0]
    fewer, _ = procedures.tram_examples({name})
    assert len(texts) == len(labels) > 4_000 and 0 < len(fewer) < len(texts)
    assert "T1574.002" not in labels and "T1574.001" in labels  # the revoked id as ATT&CK names it now


def test_tram_unmarked_sentences_are_none_by_report_and_leave_out_the_reports_asked_for() -> None:
    texts, labels = procedures.tram_unmarked_examples()
    assert len(texts) > 10_000 and set(labels) == {procedures.NONE}
    marked = {text for text in procedures.tram_examples()[0]}
    assert not marked & set(texts)  # a sentence someone marked is never also "none"
    name = sorted(json.loads(procedures.TRAM.read_text(encoding="utf-8"))["reports"])[0]
    fewer, _ = procedures.tram_unmarked_examples({name})
    assert 0 < len(fewer) < len(texts)
    assert all(path.stat().st_size < 1_000_000 for path in procedures.TRAM_UNMARKED)


@pytest.mark.parametrize(
    "pattern, literals",
    [
        ("malicious links? in (?:e-?mails?|messages)", ("malicious link",)),
        ("(?:zipped|packed) (?:\\w+ )?(?:into|to) an? archive", (" archive",)),
        ("(?:logged|signed) in (?:\\w+ )?(?:with|using) the password", (" the password",)),
        ("(?:data|files) (?:is|are) (?:zipped|compressed)", ("zipped", "compressed")),
        ("(?:victims?|users?) (?:\\w+ ){0,3}(?:run|opens?) (?:installer|executable)", ("installer", "executable")),
        # a literal as short as "to " is in nearly every text: the verbs it cannot do without say more
        ("(?:upload|send|post)\\w* (?:\\w+ )?to (?:its|the) (?:c2|server)", ("upload", "send", "post")),
        ("(?:ab|cd)?(?:e|f)", ()),  # nothing every match must hold
        ("abc|def", ()),
    ],
)
def test_a_phrase_is_searched_only_where_one_of_its_literals_is(pattern: str, literals: tuple[str, ...]) -> None:
    import re

    from ingest.enrich.resources import required_literals

    assert required_literals(pattern) == literals
    for sample in ("Data is zipped.", "the users then run the installer", "xyz"):
        if re.search(pattern, sample.lower()):
            assert any(literal in sample.lower() for literal in literals) or not literals


@pytest.mark.parametrize("prefix", ["", "İstanbul office: "])  # "İ" lowercases to two characters
def test_a_phrase_matches_whatever_the_case_and_its_evidence_is_the_text_as_written(prefix: str) -> None:
    found = dict(
        (record.id, why) for record, why in techniques_with_evidence(prefix + "They Pushed The Frostline ENCRYPTOR.")
    )
    assert found["T1486"] == "phrase: Pushed The Frostline ENCRYPTOR"


_INTRUSION = (
    "The intruders reached the file server on the third day and copied the finance share to a staging folder. "
    "They renamed their tools after Windows binaries, cleared the event logs and kept a scheduled task for "
    "persistence. Traffic to the control server went out over HTTPS every few minutes, with a fixed user agent. "
)


def test_a_long_windows_report_that_names_mobile_or_ics_systems_in_passing_keeps_enterprise_techniques() -> None:
    """A report names phones or control systems in passing (its victims' sectors, its other tooling);
    it is about them only when they come up throughout it."""
    passing = (
        _INTRUSION * 30
        + "The same group also has an Android implant and, separately, an iOS one. "
        + "The backdoor records the screen every minute and uploads the images."
    )
    assert "T1113" in techniques(passing)
    assert "T1513" not in techniques(passing)
    throughout = " ".join(["The Android banking trojan records the screen of the smartphone."] * 3)
    assert "T1513" in techniques(throughout)


@pytest.mark.parametrize(
    "sentence, expected",
    [
        (
            "Most of the traffic came from DNS and NTP reflection attacks that bounced spoofed queries off "
            "open servers.",
            "T1498.002",
        ),
        ("The volumetric part was a reflection-amplification flood off misconfigured memcached servers.", "T1498.002"),
        ("The botnet launched SYN floods directly from the infected routers.", "T1498.001"),
        ("The group rented a booter that sends HTTP request floods at the checkout pages of shops.", "T1499.002"),
    ],
)
def test_a_flood_told_by_its_kind_gives_the_sub_technique(sentence: str, expected: str) -> None:
    found = techniques(sentence)
    assert expected in found and expected.split(".")[0] not in found


@pytest.mark.parametrize(
    "sentence",
    [
        "Last year the market saw a reflection of wider economic trends.",
        "The botnet launched a UDP flood of 3 Tbps against a hosting provider.",  # the kind is not told: T1498
    ],
)
def test_a_flood_or_a_reflection_of_no_told_kind_gives_no_sub_technique(sentence: str) -> None:
    assert not {"T1498.001", "T1498.002"} & techniques(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The launcher is a signed Adobe executable that loads a malicious version.dll placed beside it in its folder.",
        "The legitimate signed binary then loads the attacker's DLL from its own directory instead of the system one.",
    ],
)
def test_a_dll_loaded_beside_a_signed_program_is_side_loading_as_analysts_name_it(sentence: str) -> None:
    found = techniques(sentence)
    assert "T1574.002" in found and "T1574.001" not in found


def test_a_dll_search_order_hijack_keeps_the_dll_technique() -> None:
    found = techniques("The malware hijacks the DLL search order, placing a DLL in a folder searched before System32.")
    assert "T1574.001" in found and "T1574.002" not in found


@pytest.mark.parametrize(
    "sentence",
    [
        "Alert when Office applications spawn PowerShell or cmd.exe with an encoded command line.",
        "First, look for Exchange worker processes (w3wp.exe) that spawn shells like cmd.exe or powershell.exe.",
        "- Monitor for rundll32.exe loading a DLL from a user's download folder.",
        "Review registry Run keys for entries that point to files in AppData.",
    ],
)
def test_advice_to_defenders_gives_the_classifier_nothing_to_read(sentence: str) -> None:
    assert procedures.clauses(sentence) == []
    assert not procedures.detect([sentence])


def test_a_report_of_what_the_actor_did_is_still_read() -> None:
    assert procedures.clauses("Then the actor dumped LSASS memory with a renamed copy of procdump.")
    assert "T1113" in techniques("Updated versions of the implant capture screenshots every minute and upload them.")
