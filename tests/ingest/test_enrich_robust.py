"""Enrichment never raises on any text, and every IOC it gives is a normalised value of its type.

The property test mixes arbitrary text with fragments shaped like indicators that real reports get wrong
(defangs missing a bracket, dotted numbers that are versions or placeholders, IPv6 runs, overlong tokens,
control characters). The mutation test runs every article of both bench sets with seeded damage of the
same kinds. Both also assert that no extractor failed: the parsing itself handles these texts, the
pipeline's guard (tested on its own in ``test_enrich_guard``) is the last line, not the fix.
"""

from __future__ import annotations

import os
import random
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.enrich import Enrichment, enrich
from ingest.enrich.scan import url_host
from store.indicators import detect_type, normalize

ROOT = Path(__file__).resolve().parents[2]
ARTICLES = sorted([*(ROOT / "bench" / "enrich_eval" / "articles").iterdir(),
                   *(ROOT / "bench" / "enrich_heldout" / "articles").iterdir()])
# CTIWIRE_FUZZ_EXAMPLES=5000 for a longer, randomised run; the default is small and derandomised for CI.
EXAMPLES = int(os.environ.get("CTIWIRE_FUZZ_EXAMPLES", "0"))
BRACKETS = ["[.]", "[.", ".]", "[.]]", "[[.]", "(.)", "(.", ".)", "{.}", "[dot]", "[dot", "[", "]", "."]
CONTROL = ["\x00", "\x01", "\x07", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\u200b", "\u200e", "\u2028", "\ufeff"]

_label = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
_defang = st.builds(
    lambda scheme, labels, marks, path: scheme + "".join(
        label + mark for label, mark in zip(labels[:-1], marks, strict=False)) + labels[-1] + path,
    st.sampled_from(["", "http://", "hxxp://", "hxxps[:]//", "h[xx]p://", "fxp://", "http[://]", "https://["]),
    st.lists(_label, min_size=2, max_size=4), st.lists(st.sampled_from(BRACKETS), min_size=3, max_size=3),
    st.sampled_from(["", "/", "/a.exe", "]/x", ":8080/p?q=1", "[/]c2", "@evil.com", "/a\x00b", "/\u202egpj.exe"]))
_dotted = st.lists(st.integers(0, 99999).map(str) | st.sampled_from(["000", "00", "01", "255", "256", "999"]),
                   min_size=1, max_size=9).map(".".join)
_ipv6 = st.builds(lambda groups, sep, wrap: wrap[0] + sep.join(groups) + wrap[1],
                  st.lists(st.text(alphabet="0123456789abcdefABCDEFg", max_size=6), min_size=1, max_size=10),
                  st.sampled_from([":", "::", ":::"]), st.sampled_from([("", ""), ("[", "]"), ("[", ""), ("", "]")]))
_overlong = st.builds(lambda char, count, tail: char * count + tail, st.sampled_from(["a", "f", "0", "a.", "-", "ab."]),
                      st.integers(60, 3000), st.sampled_from(["", ".com", "@x.io", "/x"]))
_placeholder = st.sampled_from(["redacted", "[redacted]", "REDACTED.REDACTED", "x.x.x.x", "000.000.000.000",
                                "1.2.3.[redacted]", "hxxp://[redacted]/a.exe", "http://[REDACTED]:443/",
                                "a@[1.2.3.4]", "CVE-2024-", "CVE\u20102024\u201012345678", "T1059.", "::", "[::]"])
_fragment = st.one_of(st.text(max_size=30), _defang, _dotted, _ipv6, _overlong, _placeholder,
                      st.sampled_from(CONTROL),
                      st.sampled_from(["\n", "\n## Indicators of compromise\n", " | ", "its C2 server at"]))
_article = st.lists(_fragment, max_size=25).map(" ".join)
_markup = st.lists(_fragment | st.sampled_from(["<p>", "</p>", "<h2>", "</h2>", "<td>", "<script>", "<title>",
                                                "<!-- c -->", "<?xml version='1.0' encoding='utf-8'?>", "<"]),
                   max_size=25).map("".join)
_SETTINGS = settings(max_examples=EXAMPLES or 150, derandomize=not EXAMPLES, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def assert_clean(found: Enrichment) -> None:
    """No extractor failed, and every IOC is a value of its type that normalising leaves unchanged."""
    assert isinstance(found, Enrichment)
    assert found.errors == []
    for ioc in found.iocs:
        assert detect_type(ioc.value) == ioc.type, ioc
        assert normalize(ioc.type, ioc.value) == ioc.value, ioc
        assert not any(unicodedata.category(char) in ("Cc", "Cf") for char in ioc.value), ioc
        if ioc.type in ("domain", "url", "email"):  # a name's DNS limits (RFC 1035 2.3.4), not a hash's length
            host = url_host(ioc.value) if ioc.type == "url" else ioc.value.rpartition("@")[2]
            assert len(host) <= 253 and all(len(label) <= 63 for label in host.split(".")), ioc


@_SETTINGS
@given(title=st.text(max_size=40) | _defang, text=_article)
def test_enrich_never_raises_on_text_with_ioc_shaped_fragments(title: str, text: str) -> None:
    assert_clean(enrich(title, text))


@_SETTINGS
@given(markup=_markup)
def test_enrich_never_raises_on_html_with_ioc_shaped_fragments(markup: str) -> None:
    """Control characters XML forbids, an XML declaration in decoded text, a page with no element."""
    assert_clean(enrich("", "", html=markup))


DECLARATION = "<?xml version='1.0' encoding='utf-8'?>"


@pytest.mark.parametrize("before", ["\x00" + DECLARATION, DECLARATION + DECLARATION, DECLARATION + "\x85<?php ?>"])
def test_xml_declarations_and_lone_instructions_are_read_as_html(before: str) -> None:
    """Found by the randomised run: a NUL before the declaration hid it, a second one became the first once
    the first was removed, and a lone processing instruction after a NEL was parsed as the page's root."""
    found = enrich("", "", html=before + "<p>The C2 server is hxxp://x-c2[.]top/a</p>")
    assert_clean(found)
    assert {ioc.value for ioc in found.iocs} == {"http://x-c2.top/a", "x-c2.top"}
    assert_clean(enrich("", "", html=before))


def test_real_report_fragments_give_the_right_indicators_or_none() -> None:
    """The shapes that raised on published reports: a half-bracket defang is still the URL; versions,
    placeholders and redactions where an address would stand are no indicator."""
    text = ("The loader was fetched from hxxp://evil-cdn.]com/a.exe (C2 evil-cdn[.com). It targets Adobe Flash "
            "Player 18.0.0.324 and the trojanized 3CXDesktopApp 18.12.407.0; beacons went to 000.000.000.000, "
            "hxxp://[redacted]/b.exe and 185.220.1[.]999.")
    found = enrich("Loader campaign", text)
    assert_clean(found)
    assert {(ioc.type, ioc.value) for ioc in found.iocs} == {("url", "http://evil-cdn.com/a.exe"),
                                                            ("domain", "evil-cdn.com")}


def test_values_past_dns_limits_or_holding_control_characters_are_no_indicators() -> None:
    """A run of 3,000 labels, a host label of 5,000 letters, a NUL or a bidirectional override glued to a
    URL: no DNS name (RFC 1035 section 2.3.4: 63 octets a label, 255 a name) and no URL holds them."""
    text = ("The stealer's C2 server was " + "a." * 3000 + "com, and it pulled hxxp://" + "b" * 5000
            + ".com/x and hxxp://ctl-c2[.]top/a\x00b and http://rtl-c2.top/gate\u202eexe.php as C2.")
    found = enrich("Stealer", text)
    assert_clean(found)
    assert {(ioc.type, ioc.value) for ioc in found.iocs} == {
        ("url", "http://ctl-c2.top/a"), ("url", "http://rtl-c2.top/gate"), ("domain", "ctl-c2.top"),
        ("domain", "rtl-c2.top")}


def _bracket(text: str, rng: random.Random) -> str:
    spots = [m.start() for m in re.finditer(r"\[\.\]|\.", text)]
    if not spots:
        return text
    at = rng.choice(spots)
    length = 3 if text.startswith("[.]", at) else 1
    return text[:at] + rng.choice(BRACKETS) + text[at + length:]


def _dots(text: str, rng: random.Random) -> str:
    spots = list(re.finditer(r"\d+(?:\.\d+)*", text))
    if not spots:
        return text
    match = rng.choice(spots)
    parts = [rng.choice([str(rng.randrange(100000)), "000", "0" + str(rng.randrange(10))])
             for _ in range(rng.randint(1, 9))]
    return text[:match.start()] + ".".join(parts) + text[match.end():]


def _control(text: str, rng: random.Random) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(CONTROL) + text[at:]


def mutated(text: str, rng: random.Random) -> str:
    """``text`` with a dozen bracket, dotted-number and control-character mutations, then maybe truncated."""
    for _ in range(12):
        text = rng.choice((_bracket, _dots, _control))(text, rng)
    return text[:rng.randrange(len(text) + 1)] if rng.random() < 0.3 else text


def test_every_bench_article_with_random_mutations() -> None:
    assert len(ARTICLES) > 200
    rng = random.Random(20261126)
    for path in ARTICLES:
        content = mutated(path.read_text(encoding="utf-8"), rng)
        if path.suffix == ".html":
            found = enrich("", "", html=content)
        else:
            title, _, text = content.partition("\n")
            found = enrich(title, text)
        assert_clean(found)
