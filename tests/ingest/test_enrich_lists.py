"""Indicator lists without an "Indicators" heading: one test per list shape, and lists said to be clean.

Values are written plainly (not defanged) on purpose: the list's shape alone must present them.
"""

from __future__ import annotations

from enrich_support import found

from ingest.enrich.listshapes import classify_heading, list_item, opens_list, table_header, table_row
from ingest.enrich.scan import field_delimiter
from ingest.enrich.textprep import html_to_text

PROSE = "We looked at this intrusion set for several months with partners in the energy sector.\n\n"
ADDRESSES = [
    "91.235.142.76",
    "45.147.228.19",
    "185.225.69.41",
    "94.131.98.23",
    "213.252.244.7",
    "77.91.124.55",
    "109.107.182.3",
    "5.252.178.90",
    "62.182.84.61",
    "141.98.10.29",
]
DOMAINS = [
    "mywinnetwork.ddns.net",
    "cloudsync-update.com",
    "msft-telemetry.org",
    "graph-login.net",
    "hrportal-careers.com",
    "office-cdn-sync.com",
    "winupdate-check.net",
    "azure-docs.info",
    "jobs-aerospace.org",
    "vpn-gateway-auth.com",
]


def test_actor_label_lines_without_any_heading_are_indicators() -> None:
    lines = "\n".join(f"APT33 : {address} {domain}" for address, domain in zip(ADDRESSES, DOMAINS, strict=True))
    result = found(PROSE + lines + "\n\nPatch your gateways.")
    assert {("ipv4", address) for address in ADDRESSES} <= result
    assert {("domain", domain) for domain in DOMAINS} <= result


def test_malware_family_label_lines_are_indicators() -> None:
    text = PROSE + "PlugX | 91.235.142.76:443\nAsyncRAT | cloudsync-update.com:6606\nRemcos | 45.147.228.19\n"
    assert {("ipv4", "91.235.142.76"), ("domain", "cloudsync-update.com"), ("ipv4", "45.147.228.19")} <= found(text)


def test_families_spelled_their_own_way_label_indicator_lines() -> None:
    """ATT&CK's "njRAT" opens with a small letter and "Agent Tesla" is often written in one word: each still
    names the family its line pairs with values. A tool written in small letters only ("ping") names none."""
    text = PROSE + ("njRAT - 91.235.142.76 - cloudsync-update.com\nAgentTesla - 45.147.228.19 - msft-telemetry.org\n"
                    "ping - 185.225.69.41 - graph-login.net\n")
    result = found(text)
    assert {("ipv4", "91.235.142.76"), ("domain", "cloudsync-update.com"), ("ipv4", "45.147.228.19"),
            ("domain", "msft-telemetry.org")} <= result
    assert not {("ipv4", "185.225.69.41"), ("domain", "graph-login.net")} & result


def test_role_word_lines_are_indicators() -> None:
    text = PROSE + (
        "C2 -> 91.235.142.76:8080\nLoader -> http://45.147.228.19/bins/x.arm7\n"
        "Report server -> 185.225.69.41:48101\nScanner -> 94.131.98.23\n"
    )
    result = found(text)
    assert {("ipv4", "91.235.142.76"), ("ipv4", "185.225.69.41"), ("ipv4", "94.131.98.23")} <= result
    assert ("url", "http://45.147.228.19/bins/x.arm7") in result


def test_markdown_table_with_a_type_column() -> None:
    text = PROSE + (
        "| Type | Value | Note |\n|---|---|---|\n| Domain | graph-login.net | panel |\n"
        "| IPv4 | 213.252.244.7 | backend |\n| E-mail | recruiter.anna@hrportal-careers.com | persona |\n"
    )
    result = found(text)
    assert {
        ("domain", "graph-login.net"),
        ("ipv4", "213.252.244.7"),
        ("email", "recruiter.anna@hrportal-careers.com"),
    } <= result


def test_plain_text_table_with_a_type_column_and_tab_gaps() -> None:
    text = PROSE + (
        "indicator\ttype\tnote\nazure-docs.info\tdomain\tdocument lure site\n77.91.124.55\tipv4\thosts the site\n"
    )
    assert {("domain", "azure-docs.info"), ("ipv4", "77.91.124.55")} <= found(text)


def test_html_table_with_a_type_column() -> None:
    page = (
        "<html><body><h1>Campaign notes</h1><p>We looked at this intrusion set for several months.</p>"
        "<h2>Observed in our cases</h2><table><tr><th>Type</th><th>Value</th></tr>"
        "<tr><td>Domain</td><td>jobs-aerospace.org</td></tr><tr><td>IPv4</td><td>109.107.182.3</td></tr>"
        "</table></body></html>"
    )
    title, text = html_to_text(page)
    assert {("domain", "jobs-aerospace.org"), ("ipv4", "109.107.182.3")} <= found(text, title)


def test_csv_lines_cut_the_url_at_the_field_delimiter() -> None:
    text = PROSE + (
        "type,value,comment\nurl,https://winupdate-check.net/dl/setup.msix,installer payload\n"
        "ipv4,5.252.178.90,gateway\n"
    )
    result = found(text)
    assert ("url", "https://winupdate-check.net/dl/setup.msix") in result
    assert ("ipv4", "5.252.178.90") in result
    assert not any("," in value for _, value in result)


def test_semicolon_rows_with_a_role_column() -> None:
    text = (
        PROSE
        + "value;first_seen;role\n62.182.84.61;2025-02-01;session replay\nvpn-gateway-auth.com;2025-02-03;redirector\n"
    )
    assert {("ipv4", "62.182.84.61"), ("domain", "vpn-gateway-auth.com")} <= found(text)


def test_enumeration_in_a_sentence_about_malicious_infrastructure() -> None:
    text = "The implant beaconed to 141.98.10.29, 91.235.142.76 and office-cdn-sync.com in turn."
    assert {("ipv4", "141.98.10.29"), ("ipv4", "91.235.142.76"), ("domain", "office-cdn-sync.com")} <= found(text)


def test_an_enumeration_going_on_after_later_also_keeps_its_cue() -> None:
    text = ("The backdoor contacted the C2 servers 141.98.10.29, 91.235.142.76 and graph-login.net, later also "
            "45.147.228.19, 185.225.69.41 and then office-cdn-sync.com.")
    assert found(text) == {
        ("ipv4", "141.98.10.29"), ("ipv4", "91.235.142.76"), ("domain", "graph-login.net"),
        ("ipv4", "45.147.228.19"), ("ipv4", "185.225.69.41"), ("domain", "office-cdn-sync.com")}


def test_prose_pointing_below_introduces_a_list() -> None:
    text = (
        "The sender addresses below were all used by the crew.\n"
        "billing@invoice-remit.com            lookalike of the supplier\n"
        "payments@remit-portal.net            forwarding target\n"
    )
    assert {("email", "billing@invoice-remit.com"), ("email", "payments@remit-portal.net")} <= found(text)


def test_caption_naming_source_addresses_introduces_a_list() -> None:
    text = (
        "Source addresses in the access logs (first and last seen)\n"
        "45.147.228.19     2025-03-11  to  2025-03-12   VPS provider\n"
        "185.225.69.41     2025-03-12  to  2025-03-13   residential proxy\n"
    )
    assert {("ipv4", "45.147.228.19"), ("ipv4", "185.225.69.41")} <= found(text)


def test_vendor_update_servers_to_allow_yield_nothing() -> None:
    text = (
        "Our agents move to a new content network next month.\n\nHosts to allow (TCP 443)\n\n"
        "updates.nimbus-endpoint.com      signature packages\n"
        "cdn.nimbus-endpoint.com          agent installers and payload manifests\n"
        "91.235.142.76                    Europe edge\n"
    )
    assert found(text) == set()


def test_a_list_of_false_positives_yields_nothing() -> None:
    text = (
        "Our feed pushed these to the proxy, and each value is a false positive:\n\n"
        "Value                          Why it was flagged    Reality\n"
        'edge.payroll-provider.com      "phishing"            our payroll provider\n'
        '151.101.65.69                  "C2 beacon"           shared CDN edge\n'
        'd41d8cd98f00b204e9800998ecf8427e  "dropped file"     MD5 of an empty file\n'
    )
    assert found(text) == set()


def test_sinkholed_domains_yield_nothing() -> None:
    text = (
        "We took over the botnet's domains with two registrars.\n\nSinkholed domains\n\n"
        "bot-update-check.com\nrelay-mesh.net\n"
        "Any of these in your logs means an infected host tried to reach its C2.\n"
    )
    assert found(text) == set()


def test_a_clean_row_and_an_authorised_red_team_row_are_left_out() -> None:
    text = PROSE + (
        "Family | C2\nSliver | 94.131.98.23:8888 (excluded from blocklists: authorised red-team server)\n"
        "Havoc | 213.252.244.7:443\n"
    )
    result = found(text)
    assert ("ipv4", "213.252.244.7") in result
    assert ("ipv4", "94.131.98.23") not in result


def test_victims_listed_under_a_targets_heading_yield_nothing() -> None:
    assert found("Targets named by the group\n\nwww.city-transit.lt\nportal.harbour-info.lv\n") == set()


def test_a_subdomain_of_a_malicious_domain_is_kept() -> None:
    text = (
        "The agent tunnelled its C2 through t.dns-check-sync[.]com.\n"
        "12/03 02:14:07 PACKET UDP Snd TXT c2f1.t.dns-check-sync.com\n"
    )
    assert ("domain", "c2f1.t.dns-check-sync.com") in found(text)


def test_a_publishers_hyphenated_domain_is_its_own() -> None:
    text = (
        "Ostara Networks Research\n\nOperators who want data can write to abuse-data@ostara-networks.net; "
        "we share it only with the owner of the address space."
    )
    assert found(text) == set()


def test_shape_helpers() -> None:
    assert classify_heading("Sinkholed C2 domains") == "benign"
    assert classify_heading("Source addresses") == "ioc"
    assert classify_heading("Sources") == "reference"
    assert table_header("type,value,comment") == "ioc"
    assert table_header("Address | Observed activity | Dates") is None
    assert table_row("1.2.3.4 | scanner") and not table_row("A sentence, with a comma.")
    assert list_item("ar.dept@gmail.com        forwarding target of the mailbox rule")
    assert not list_item("Replies came from a small pool of addresses that show up in the message headers today.")
    assert opens_list("The operators used the following servers for C2.", "91.235.142.76") == "ioc"
    assert opens_list("The operators used the following servers for C2.", "A long line of prose follows.") is None
    assert field_delimiter("ipv4,5.252.178.90,gateway") == "," and field_delimiter("a, b, c") is None
