"""The shipped MISP warninglists, matched by each list's type and the IOC type."""

from __future__ import annotations

import pytest

from store.warninglists import Warninglists, warninglists

RESOLVERS = "List of known IPv4 public DNS resolvers"


@pytest.mark.parametrize(
    ("ioc_type", "value", "expected"),
    [
        ("ipv4", "8.8.8.8", RESOLVERS),  # cidr list, a bare address entry
        ("ipv4", "192.0.2.77", "List of RFC 5735 CIDR blocks"),  # cidr list, inside a network
        ("ipv6", "2001:db8::1", "List of RFC 3849 CIDR blocks"),
        ("domain", "login.microsoftonline.com", "List of known Office 365 URLs"),  # string list, exact
        ("domain", "deep.sub.example.com", "Top 1,000,000 most-used sites from Tranco"),  # hostname list, parent
        ("url", "https://login.microsoftonline.com/", "List of known Office 365 URLs"),  # a whole site: its host
        ("md5", "d41d8cd98f00b204e9800998ecf8427e", "List of known hashes for empty files"),
        ("email", "someone@0-mail.com", "List of disposable email domains"),  # substring list
        ("email", "abuse@anything.example", "Common contact e-mail addresses"),  # regex list
    ],
)
def test_listed_values_name_their_list(ioc_type: str, value: str, expected: str) -> None:
    assert expected in warninglists().names(ioc_type, value)


@pytest.mark.parametrize(
    ("ioc_type", "value"),
    [
        ("ipv4", "45.153.160.7"),
        ("domain", "update-secure-cdn.top"),
        ("url", "https://github.com/someone/tool/releases/download/loader.exe"),  # a resource on a listed host
        ("sha256", "9f" * 32),
        ("cve", "CVE-2024-3400"),
        ("ipv4", "not-an-address"),
    ],
)
def test_unlisted_values_name_none(ioc_type: str, value: str) -> None:
    assert warninglists().names(ioc_type, value) == []


def test_lists_apply_only_to_their_attribute_types() -> None:
    lists = Warninglists(
        [
            {
                "name": "hosts",
                "type": "hostname",
                "version": 1,
                "list": ["evil.example"],
                "matching_attributes": ["domain"],
            },
            {
                "name": "hashes",
                "type": "string",
                "version": 1,
                "list": ["ab" * 16],
                "matching_attributes": ["md5"],
                "category": "false-positive",
            },
        ]
    )
    assert lists.names("domain", "a.evil.example") == ["hosts"]
    assert lists.names("email", "x@a.evil.example") == []  # the list does not apply to addresses
    assert lists.names("md5", "AB" * 16) == ["hashes"]
    assert lists.describe(["hashes", "gone"]) == [{"name": "hashes", "category": "false-positive"}, {"name": "gone"}]


def test_version_names_the_lists_contents() -> None:
    one = Warninglists([{"name": "a", "type": "string", "version": 1, "list": ["x"], "matching_attributes": ["md5"]}])
    two = Warninglists([{"name": "a", "type": "string", "version": 2, "list": ["x"], "matching_attributes": ["md5"]}])
    assert one.version != two.version
    assert warninglists().version.startswith("1.7.0:")
