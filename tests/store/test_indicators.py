"""Refanging, type detection and normalisation: one indicator, one spelling."""

from __future__ import annotations

import pytest

from store.indicators import detect_type, normalize, refang


@pytest.mark.parametrize(("written", "fanged"), [
    ("evil[.]com", "evil.com"),
    ("evil(.)com", "evil.com"),
    ("evil[dot]com", "evil.com"),
    ("hxxps[:]//c2[.]bad[.]net/a?b=1", "https://c2.bad.net/a?b=1"),
    ("hXXp://1.2.3[.]4/x", "http://1.2.3.4/x"),
    ("ops[@]mail[.]evil[.]ru", "ops@mail.evil.ru"),
    ("plain.example.org", "plain.example.org"),
])
def test_defanged_forms_are_refanged(written: str, fanged: str) -> None:
    assert refang(written) == fanged


@pytest.mark.parametrize(("value", "kind"), [
    ("203.0.113.7", "ipv4"), ("2001:db8::1", "ipv6"), ("bad.example.net", "domain"),
    ("https://bad.example.net/x", "url"), ("a@b.example.com", "email"), ("CVE-2024-3400", "cve"),
    ("cve\u20112023\u201144487", "cve"), ("d41d8cd98f00b204e9800998ecf8427e", "md5"), ("a" * 40, "sha1"),
    ("b" * 64, "sha256"), ("c" * 128, "sha512"), ("not an indicator", None), ("abc", None), ("e" * 33, None),
])
def test_types_are_detected(value: str, kind: str | None) -> None:
    assert detect_type(value) == kind


@pytest.mark.parametrize(("kind", "value", "normal"), [
    ("domain", "EVIL.Example.COM.", "evil.example.com"),
    ("ipv6", "2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
    ("ipv6", "2A01:04F8:0010:00B2:0000:0000:0000:0042", "2a01:4f8:10:b2::42"),  # RFC 5952
    ("url", "http://[2A01:04F8:0010:00B2:0000:0000:0000:0042]:8080/Bins/X", "http://[2a01:4f8:10:b2::42]:8080/Bins/X"),
    ("url", "HTTPS://Bad.Example.NET/Path/Keep?Q=Case#Frag", "https://bad.example.net/Path/Keep?Q=Case#Frag"),
    ("md5", "D41D8CD98F00B204E9800998ECF8427E", "d41d8cd98f00b204e9800998ecf8427e"),
    ("cve", "cve\u20132021\u201344228", "CVE-2021-44228"),
    ("email", "Ops@Mail.Evil.RU", "ops@mail.evil.ru"),
])
def test_values_are_normalised_once(kind: str, value: str, normal: str) -> None:
    assert normalize(kind, value) == normal
    assert normalize(kind, normal) == normal
