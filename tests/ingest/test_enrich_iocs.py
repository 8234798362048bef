"""IOC extraction rules, one class of value per test (independent of bench/enrich_eval)."""

from __future__ import annotations

import pytest
from enrich_support import found


def values(text: str) -> set[str]:
    return {value for _, value in found(text)}


@pytest.mark.parametrize("written, ioc_type, value", [
    ("evil-cdn[.]net", "domain", "evil-cdn.net"),
    ("evil-cdn(.)net", "domain", "evil-cdn.net"),
    ("evil-cdn[dot]net", "domain", "evil-cdn.net"),
    ("hxxps://evil-cdn[.]net/gate.php", "url", "https://evil-cdn.net/gate.php"),
    ("hxxp[:]//evil-cdn[.]net/a", "url", "http://evil-cdn.net/a"),
    ("hXXps[://]evil-cdn[.]net/b", "url", "https://evil-cdn.net/b"),
    ("45.142.212[.]100", "ipv4", "45.142.212.100"),
    ("ops[@]evil-cdn[.]net", "email", "ops@evil-cdn.net"),
    ("ops[at]evil-cdn[.]net", "email", "ops@evil-cdn.net"),
    ("hxxp://[evil-cdn[.]net]/a.exe", "url", "http://evil-cdn.net/a.exe"),
    ("hxxp://evil-cdn[.]net]/b.exe", "url", "http://evil-cdn.net/b.exe"),
    ("http://[evil-cdn.net/c.exe", "url", "http://evil-cdn.net/c.exe"),
    ("hxxp://[45.142.212.100]:8080/d", "url", "http://45.142.212.100:8080/d"),
    ("hxxp://[2a03:b0c0:3:d0::1af1:1]:8080/e", "url", "http://[2a03:b0c0:3:d0::1af1:1]:8080/e"),
])
def test_defanged_values_are_refanged_and_found(written: str, ioc_type: str, value: str) -> None:
    assert (ioc_type, value) in found(f"The implant beacons to its C2 server {written} every minute.")


def test_defanging_alone_does_not_make_an_ioc() -> None:
    assert found("Readers can find the advisory on the official site acme-corp[.]com today.") == set()
    assert found("The phishing kit was impersonating login[.]acme-bank[.]com to steal logins.") == set()


def test_malicious_url_brings_its_host_and_keeps_path_query_fragment() -> None:
    result = found("The dropper downloads the payload from hxxps://files-cdn[.]top/a/b.php?id=7&x=1#frag.")
    assert ("url", "https://files-cdn.top/a/b.php?id=7&x=1#frag") in result
    assert ("domain", "files-cdn.top") in result


def test_url_loses_trailing_punctuation_but_keeps_balanced_brackets() -> None:
    result = values("Victims were redirected to the malicious page (hxxp://bad-site[.]xyz/x_(1)/run), then...")
    assert "http://bad-site.xyz/x_(1)/run" in result


def test_malicious_url_on_an_ip_host_brings_the_ip() -> None:
    assert ("ipv4", "91.214.124.17") in found("The loader fetched hxxp://91.214.124[.]17:8080/stage2.bin as payload.")


@pytest.mark.parametrize("url, host", [
    ("https://raw.githubusercontent.com/kx/tools/main/run.ps1", "raw.githubusercontent.com"),
    ("https://cdn.discordapp.com/attachments/1/2/loader.zip", "cdn.discordapp.com"),
    ("https://bit.ly/3xYzAbC", "bit.ly"),
    ("https://www.dropbox.com/s/abc/invoice.zip?dl=1", "www.dropbox.com"),
])
def test_shared_services_give_the_url_only(url: str, host: str) -> None:
    result = found(f"The malicious payload was hosted at {url} during the campaign.")
    assert result == {("url", url)}, f"{host} is a shared service: the URL only"


def test_webmail_address_is_an_ioc_but_not_its_domain() -> None:
    result = found("The phishing emails were sent from the address billing.dept77@gmail.com to finance staff.")
    assert ("email", "billing.dept77@gmail.com") in result
    assert ("domain", "gmail.com") not in result


def test_malicious_address_brings_its_domain() -> None:
    result = found("Lures came from the spoofed sender hr-notice@payroll-update[.]info in March.")
    assert {("email", "hr-notice@payroll-update.info"), ("domain", "payroll-update.info")} <= result


@pytest.mark.parametrize("value", ["example.com", "mail.example.org", "192.0.2.44", "198.51.100.7", "203.0.113.9",
                                   "2001:db8::1"])
def test_documentation_names_and_ranges(value: str) -> None:
    assert found(f"The malware connects to the C2 server {value} over HTTPS.") == set()


@pytest.mark.parametrize("value", ["10.1.2.3", "192.168.0.15", "172.16.4.4", "127.0.0.1", "169.254.10.10", "fe80::1",
                                   "::1", "100.64.1.1"])
def test_private_loopback_link_local(value: str) -> None:
    assert found(f"The C2 beacon also scanned {value} from the compromised host.") == set()


def test_cidr_networks_are_not_iocs() -> None:
    assert found("Block the attacker infrastructure in 45.153.160.0/24 and 2a0e:1c80::/29 now.") == set()


def test_a_prefix_of_one_address_is_that_address() -> None:
    """A /32 (or an IPv6 /128) is one host written as a network, as firewall exports and advisories write it."""
    text = "Block the attacker infrastructure: 45.153.160.2/32 and 2a0e:1c80::7/128 are its C2 servers."
    assert found(text) == {("ipv4", "45.153.160.2"), ("ipv6", "2a0e:1c80::7")}


@pytest.mark.parametrize("value", ["8.8.8.8", "1.1.1.1", "9.9.9.9", "208.67.222.222", "2001:4860:4860::8888"])
def test_public_resolvers(value: str) -> None:
    assert found(f"The malware checks connectivity by resolving its C2 through {value} first.") == set()


@pytest.mark.parametrize("sentence", [
    "The flaw affects firmware version 10.2.0.1 of the malicious-looking appliance.",
    "Versions 7.0.1 through 7.2.4.1 are affected and attackers exploit them.",
    "Attackers exploit builds 4.1.2.3 and earlier of the VPN client.",
    "Upgrade to 5.4.3.2 now, since the attacker campaign continues.",
])
def test_versions_shaped_like_ips(sentence: str) -> None:
    assert found(sentence) == set()


@pytest.mark.parametrize("name", ["update.zip", "install.sh", "loader.py", "invoice.one", "libssl.so", "readme.md",
                                  "payload.exe", "config.json", "svchost.exe", "notes.txt"])
def test_file_names_with_dots_are_not_domains(name: str) -> None:
    assert found(f"The malicious dropper writes {name} to disk before it beacons.") == set()


@pytest.mark.parametrize("name", ["ASP.NET", "Socket.IO", "Node.js", "Booking.com", "Vue.js"])
def test_product_names_with_dots_are_not_domains(name: str) -> None:
    assert found(f"The attackers targeted servers built with {name} in this campaign.") == set()


@pytest.mark.parametrize("sentence", [
    "The malicious app com.bank.app requests accessibility rights.",
    "The trojan uses the package name com.tencent.mm.plugin to hide.",
    "Its bundle identifier org.update.service mimics a system component.",
])
def test_app_bundle_identifiers(sentence: str) -> None:
    assert found(sentence) == set()


def test_dynamic_dns_parent_zone_is_not_an_ioc_but_a_subdomain_is() -> None:
    result = found("The RAT used kx9-relay.duckdns[.]org for C2; duckdns.org itself is a free service.")
    assert ("domain", "kx9-relay.duckdns.org") in result
    assert ("domain", "duckdns.org") not in result
    assert found("Attackers like free tunnels such as trycloudflare.com and ngrok.io for C2.") == set()


@pytest.mark.parametrize("sentence", [
    "The fix landed in commit 3f786850e387550fdab836ed7e6dc881de23001b of the malicious repo.",
    "Its JA3 fingerprint e7d705a3286e19ea42f587b344ee6865 was seen in C2 traffic.",
    "The beacon's JARM is 2ad2ad0002ad2ad22c42d42d000000faabb8fd156aa8b4d8a37853e1063261 on the C2.",
    "The wallet 0x8f7a3c9e1b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a received ransom payments from malware victims.",
    "The certificate thumbprint 5f3c1ea8b6d2c9e4a7f0b1d3c5e7a9b2d4f6a8c0 signed the malware.",
])
def test_hex_strings_that_are_not_file_hashes(sentence: str) -> None:
    assert found(sentence) == set()


def test_file_hashes_by_length_and_normalised() -> None:
    text = ("The loader sample (SHA256 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08, MD5 "
            "5d41402abc4b2a76b9719d911017c592) drops a DLL with SHA-1 aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d.")
    assert found(text) == {("sha256", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
                           ("md5", "5d41402abc4b2a76b9719d911017c592"),
                           ("sha1", "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d")}


def test_benign_brand_and_victim_beside_malicious_lookalike() -> None:
    text = ("The operators registered the lookalike domain micros0ft-support[.]com, impersonating microsoft.com, "
            "and targeted employees of northwind-logistics.com with the phishing lure.")
    assert found(text) == {("domain", "micros0ft-support.com")}


def test_publisher_and_reference_links_are_not_iocs() -> None:
    text = ("According to researchers at labs.quietsec-research.io, the malware is new. Details are in the "
            "report at https://labs.quietsec-research.io/blog/new-loader and the victim acme-foods.com's statement.")
    assert found(text) == set()


def test_indicators_section_lists_are_iocs() -> None:
    text = "Indicators of compromise\n- cdn-sync[.]org\n- 185.225.73.18\n- d41d8cd98f00b204e9800998ecf8427e\n"
    assert found(text) == {("domain", "cdn-sync.org"), ("ipv4", "185.225.73.18"),
                           ("md5", "d41d8cd98f00b204e9800998ecf8427e")}


def test_references_section_links_are_not_iocs() -> None:
    text = "Background text about a malware family.\n\nReferences\n- https://vendor-blog.net/posts/analysis-of-x\n"
    assert found(text) == set()


def test_ipv6_is_canonical() -> None:
    result = found("The backdoor beacons to the C2 at 2a03:B0C0:0003:00D0:0000:0000:0D1E:F001 on port 443.")
    assert ("ipv6", "2a03:b0c0:3:d0::d1e:f001") in result


def test_enumeration_shares_the_cue() -> None:
    text = "The C2 servers were alpha-node[.]net, beta-node[.]org and 194.26.29.113, per the report."
    assert found(text) == {("domain", "alpha-node.net"), ("domain", "beta-node.org"), ("ipv4", "194.26.29.113")}


def test_plain_vendor_mention_without_cue_is_not_an_ioc() -> None:
    assert found("Customers can download the update from support.acmecloud.com or call the helpdesk.") == set()


def test_negated_cue_is_not_malicious() -> None:
    assert found("Miners pooled at pool.coin-pool-public.org, a public pool that is not itself malicious.") == set()
    assert found("Defenders should alert rather than blocking the vendor domains rmm-vendor.com and agent-cloud.net.") \
        == set()


def test_c2_named_as_command_or_control_server() -> None:
    assert ("domain", "panel.cmd-node.cc") in found("Bots report to the command server panel.cmd-node.cc hourly.")
    assert ("domain", "ctl.relay-grid.biz") in found("Each implant polls its control server ctl.relay-grid.biz.")


def test_cue_after_a_value_counts_in_its_clause_or_apposition_only() -> None:
    assert found("The scan of shop-victim.com, the researchers said, revealed the attackers' skimmer.") == set()
    assert ("domain", "relay-node.link") in found("The implant used relay-node.link, a C2 relay, for tasking.")


def test_restricted_zones_need_defanging_or_an_indicator_list() -> None:
    assert found("Attackers sprayed passwords against the login page of portal.stateu.edu and agency.gov.uk.") == set()
    assert ("domain", "cdn.stateu.edu") in found("The compromised site cdn.stateu[.]edu hosted the payload.")


def test_shared_service_file_link_in_an_attack_paragraph() -> None:
    text = ("The lure archive carried a stealer. Victims got https://www.mediafire.com/file/abc123/setup.zip/file "
            "in chat messages.")
    assert found(text) == {("url", "https://www.mediafire.com/file/abc123/setup.zip/file")}
    assert found("Download the docs from https://www.mediafire.com/file/abc123/manual.pdf/file today.") == set()


def test_a_product_version_shaped_like_an_address_is_no_indicator() -> None:
    """A version written right after its product's name in a sentence about an attack is no address, even
    with every part under 256; an address after a name in a list, or with a large first part, still is."""
    text = ("The operators configured Cobalt Strike 4.9.1.0 beacons for their C2. The malware drops Mimikatz "
            "2.2.0.20 and contacts its C2 server. Victims ran Flash 32.0.0.207 when the malware was delivered. "
            "The trojanized 3CXDesktopApp 18.12.107.0 contacted its C2. Fortinet FortiOS 7.2.4.1 devices were "
            "exploited by the attackers.\n"
            "The operators ran Cobalt Strike 139.60.161.167 as their C2 server.\n"
            "Emotet Loader 5.252.178.90\n")
    assert found(text) == {("ipv4", "139.60.161.167"), ("ipv4", "5.252.178.90")}


def test_a_placeholder_where_a_host_would_stand_is_no_indicator() -> None:
    text = ("The C2 servers were xxx.xxx.xxx.xxx and redacted[.]com, and the loader came from "
            "hxxp://redacted[.]com/a.exe and hxxp://xxx.xxx/b.exe; the C2 domain redacted-cdn[.]top stays.")
    assert found(text) == {("domain", "redacted-cdn.top")}


def test_a_url_written_in_capitals_is_not_taken_for_an_organisations_name() -> None:
    """"Evil-C2" inside HTTPS://Evil-C2.com is the host itself, not an organisation the article names."""
    text = "The malware C2 server is HTTPS://Evil-C2.com/Gate today; Lindqvist Labs found it."
    assert found(text) == {("url", "https://evil-c2.com/Gate"), ("domain", "evil-c2.com")}
    assert found("Lindqvist Labs published its results at lindqvistlabs.com after the C2 was found.") == set()
