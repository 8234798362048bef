"""One indicator, one spelling: refanging, type detection and normalisation.

Every layer that meets an indicator value (the extractor in ingest/, the search and lookup handlers,
the record merge) goes through these functions, so ``evil[.]com``, ``EVIL.com`` and ``evil.com.`` are
one record. Detection and spelling are per type and come from the registry (``store.ioctypes``).
"""

from __future__ import annotations

import re

from store.ioctypes import claimants, spec_of

# Defanging conventions seen in advisories and vendor reports: hxxp, [.] (.) {.} [dot], [@] [at], [:].
_DEFANG_SUBS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bh(?:xx|XX|\[xx\]|\[XX\]|\*\*)p(s?)(?=\s*(?:\[:\]|:|\[://\]))", re.IGNORECASE), r"http\1"),
    (re.compile(r"\bfxp(?=\s*(?:\[:\]|:))", re.IGNORECASE), "ftp"),
    (re.compile(r"\[://\]"), "://"),
    (re.compile(r"\[:\]|\(:\)"), ":"),
    (re.compile(r"\s?(?:\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\)|\{dot\}|\[d\])\s?", re.IGNORECASE), "."),
    (re.compile(r"\s?(?:\[@\]|\(@\)|\{@\}|\[at\]|\(at\)|\{at\})\s?", re.IGNORECASE), "@"),
    (re.compile(r"\[/\]"), "/"),
    # Half of a bracket pair lost in copying ("evil.]com", "evil[.com"): still the defanged dot.
    (re.compile(r"(?<=\w)(?:\[\.|\.\])(?=\w)"), "."),
)


def refang(text: str) -> str:
    """The text with defanged notations undone; a fanged value comes back unchanged."""
    for pattern, replacement in _DEFANG_SUBS:
        text = pattern.sub(replacement, text)
    return text


def detect_type(value: str) -> str | None:
    """The IOC type of a (refanged) value, or None when it is none of the registered types.

    When several types claim the value, the earliest registered wins (``store.ioctypes``: a 32-hex string
    is md5 unless the caller names another type that claims it).
    """
    found = claimants(value.strip())
    return found[0] if found else None


def normalize(ioc_type: str, value: str) -> str:
    """The record spelling of ``value``: lowercase hosts and hashes, canonical IPs, upper-case CVE ids.

    ``ValueError`` when the value cannot be spelled as that type (or the type is not registered)."""
    return spec_of(ioc_type).normalize(value.strip())
