"""The held-out set's IOC error classes, one rule per test: IPv6 lists and RFC 5952 spelling, attacker contacts and
senders told in prose, tools, platforms, cloud storage and resolvers named as context, an organisation's own
site, versions, seized or sinkholed values, clean hashes and fingerprints, and HTML as a browser renders it
(independent of the bench sets)."""

from __future__ import annotations

import pytest
from enrich_support import found


def test_ipv6_alone_on_indented_lines_introduced_by_a_sentence_in_rfc5952_form() -> None:
    text = ("The bots connected to these controllers during the monitoring:\n"
            "    2A05:D014:0A4B:1700:0000:0000:0000:0019\n"
            "    2a0b:4340:00a2:0000:0000:0000:0000:0bad\n"
            "Vendors were told on Monday and the list was shared with CERTs.")
    assert found(text) == {("ipv6", "2a05:d014:a4b:1700::19"), ("ipv6", "2a0b:4340:a2::bad")}


def test_a_value_alone_on_its_line_is_listed_but_a_prose_mention_is_not() -> None:
    assert found("Further hosts seen:\n\n  2a12:bec4:1460:f4::2\n") == {("ipv6", "2a12:bec4:1460:f4::2")}
    assert found("The company moved its site to 2a12:bec4:1460:f4::2 in March.") == set()


def test_an_introduced_list_ends_with_the_first_prose_line() -> None:
    text = ("Over the three weeks the operators rented further hosts from the same provider for scanning:\n"
            "  45.61.137.12\n"
            "Separately, the company's status page moved to 94.130.10.5 in a routine migration last year.")
    assert found(text) == {("ipv4", "45.61.137.12")}


def test_ransom_note_contacts_are_the_attackers_even_at_webmail_services() -> None:
    text = "The ransom note told the company to write to recover-now@onionmail.org within 72 hours."
    assert ("email", "recover-now@onionmail.org") in found(text)
    assert found("Readers who have questions can write to tips@newsroom-example.org.") == set()


def test_request_capture_services_and_platforms_named_as_tools_are_not_iocs() -> None:
    text = ("To confirm the bug, the researchers used webhook.site to capture callbacks, pulled the image "
            "from hub.docker.com and loaded a model from huggingface.co.")
    assert found(text) == set()
    exfil = "The stealer posts stolen cookies to https://webhook.site/3f9a2c1e-77aa-4b1e-9d3c-5e2f1a0b9c8d."
    assert ("url", "https://webhook.site/3f9a2c1e-77aa-4b1e-9d3c-5e2f1a0b9c8d") in found(exfil)
    assert ("domain", "webhook.site") not in found(exfil)


def test_an_organisations_own_site_is_not_an_ioc_unless_listed_or_defanged() -> None:
    text = "Lindqvist Labs published its scanning results at lindqvistlabs.com on Friday."
    assert found(text) == set()
    listed = "Lindqvist Labs tracked the campaign.\n\nIndicators of compromise\n- lindqvistlabs.com\n"
    assert ("domain", "lindqvistlabs.com") in found(listed)


def test_version_after_a_component_word_is_not_an_address() -> None:
    assert found("Bots on servers running kernel 6.1.0.17 connected to the C2 server 94.156.71.203.") == {
        ("ipv4", "94.156.71.203")}


def test_cloud_storage_hosts_resolvers_and_query_fields_are_not_domains() -> None:
    text = ("The loader downloads hxxps://stx-dist-4471.s3.amazonaws[.]com/upd/st2.bin and resolves its server "
            "through dns.google and cloudflare-dns.com.\n\n"
            '    process.name: "rundll32.exe" and dns.question.name: "stx-telemetry.net"\n\n'
            "The build string reads STX 1.4.0.2, which is the builder version.")
    assert found(text) == {("url", "https://stx-dist-4471.s3.amazonaws.com/upd/st2.bin")}


@pytest.mark.parametrize("sentence, value", [
    ("The first logins came from 91.215.85.17 on a weekend.", ("ipv4", "91.215.85.17")),
    ("Most of the requests came from two addresses, 193.35.18.77 and 194.26.192.61.", ("ipv4", "193.35.18.77")),
    ("Staff received an e-mail from audit@dentaline-compliance.com asking for passwords.",
     ("email", "audit@dentaline-compliance.com")),
    ("The note gives a ransom contact address, molar-restore[@]onionmail[.]org, for talks.",
     ("email", "molar-restore@onionmail.org")),
    ("Pay 0.5 BTC within 72 hours and e-mail dentrescue41@tutanota.com with your ID.",
     ("email", "dentrescue41@tutanota.com")),
])
def test_senders_login_sources_and_ransom_contacts_told_in_prose(sentence: str, value: tuple[str, str]) -> None:
    assert value in found(sentence)


def test_a_publishers_support_address_stays_out() -> None:
    text = ("Northgate Managed Security published its findings at northgate-ms.com and advised customers to "
            "contact support@northgate-ms.com with questions about the ransom demand.")
    assert found(text) == set()


def test_an_ipv6_address_enumerated_with_defanged_values_is_presented_like_them() -> None:
    text = "The group manages its virtual machines from 178.238.224[.]20 and 2a02:4780:b:2::9e every day."
    assert found(text) == {("ipv4", "178.238.224.20"), ("ipv6", "2a02:4780:b:2::9e")}
    assert found("The group manages its virtual machines from 2a02:4780:b:2::9e every day.") == set()



def test_a_hard_wrapped_html_paragraph_is_one_line_but_pre_keeps_its_lines() -> None:
    from ingest.enrich.textprep import html_to_text

    page = ("<html><body><p>The e-mails come from attacker-registered domains, such as\n"
            "protocol@diplo-invite.org, and carry a link.</p><pre>45.1.2.3\n45.1.2.4</pre></body></html>")
    _, text = html_to_text(page)
    first = "The e-mails come from attacker-registered domains, such as protocol@diplo-invite.org, and carry a link."
    assert text.splitlines() == [first, "45.1.2.3", "45.1.2.4"]
    assert ("email", "protocol@diplo-invite.org") in found(text)
    _, table = html_to_text("<table>\n<caption>Indicators of compromise</caption>\n<tr><th>Indicator</th><th>Type</th>"
                            "</tr>\n<tr><td>2A0C:9A40:0001:0000:0000:0000:0000:0054</td><td>ipv6</td></tr></table>")
    assert table.splitlines()[0] == "Indicators of compromise"  # a caption renders on its own line


@pytest.mark.parametrize("text", [
    "The media player (vlcplay.exe, legitimate signed binary): sha256 "
    "0f4e2d6c8a1b3f5e7d9c0b2a4f6e8d1c3b5a7f9e0d2c4b6a8f1e3d5c7b9a0e2f.",
    "A text file in the archive, with hash 7a6c5b4e3d2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b, "
    "turned out to be a harmless licence file.",
    "The clean installer is listed for comparison (clean): "
    "4b2a0c8e6d4f2b0a8c6e4d2f0b8a6c4e2d0f8b6a4c2e0d8f6b4a2c0e8d6f4b2a.",
    "The loader's TLS client presents the JA3 hash 6734f37431670b3ab4292b8f60f29984.",
    "Its DNS tunnel builds names such as 4d1f8a2c9e7b3d5f6a0c8e2b4d6f1a3c.x9.tunnel.example from the machine id.",
])
def test_hashes_the_article_calls_clean_fingerprints_and_hostname_labels_are_not_iocs(text: str) -> None:
    assert not {value for value in found(text) if value[0] in ("md5", "sha1", "sha256")}


def test_a_malicious_hash_beside_a_clean_one_stays() -> None:
    text = ("The dropper has SHA-256 9c1e4f7a2b8d3c6e0f5a9b2d4c7e1f3a5b8d0c2e4f6a8b1d3c5e7f9a0b2c4d6e; the "
            "legitimate player it side-loads into is not listed.")
    assert found(text) == {("sha256", "9c1e4f7a2b8d3c6e0f5a9b2d4c7e1f3a5b8d0c2e4f6a8b1d3c5e7f9a0b2c4d6e")}


def test_seized_and_sinkholed_values_webmail_hosts_and_query_fields_are_not_iocs() -> None:
    text = ("The public domains, including lumenstore[.]shop and lumen-admin[.]cc, had been seized by police. "
            "An older domain, lumen-upd[.]ru, was taken over and sinkholed by a CERT. New builds contact the C2 "
            "panel at lumen-gate[.]top; buyers contact the operators at lumen.sales[@]tutamail[.]com.\n\n"
            '    process.name:"lumen.exe" AND user.name == "svc"\n')
    assert found(text) == {("domain", "lumen-gate.top"), ("email", "lumen.sales@tutamail.com")}
    assert ("domain", "evil-cdn.net") in found("The malware connects to its C2 server at evil-cdn.net:443.")


@pytest.mark.parametrize("text, kept", [
    ("Earlier builds used the domain spindle-old[.]top. It was sinkholed in August.", set()),
    ("A fourth domain, asean-docs[.]info, has been sinkholed by Northgate and partners.", set()),
    ("An earlier domain, notepadpp-get[.]com, now resolves to a sinkhole run by a non-profit.", set()),
    ("The loader's C2 server is at fresh-c2[.]com. It rotates every week.", {("domain", "fresh-c2.com")}),
    ("The C2 moved from old-c2[.]com to new-c2[.]com after the first was sinkholed.",
     {("domain", "old-c2.com"), ("domain", "new-c2.com")}),  # two values: the words may be about either
])
def test_a_lone_value_its_sentence_says_was_sinkholed_is_not_an_ioc(text: str, kept: set[tuple[str, str]]) -> None:
    assert found(text) == kept

