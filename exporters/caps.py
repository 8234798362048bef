"""How much one IOC record brings into an export, whatever its articles mention.

A record may be reported by thousands of articles naming thousands of CVEs; an export cites a few of
them, so its size follows the number of records, not the data behind them. The rest stays reachable
through the cited articles (a STIX ``report`` per article names it by URL and by its ctiwire id). The
OpenAPI description states these numbers (server/openapi_parts.py reads them from here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

# The record's listed article ids read per record: records list their most recent few.
ARTICLE_CANDIDATES = 20
# Of those, the most recently published ones an export cites (STIX reports, external references).
ARTICLES_PER_RECORD = 3
CVES_PER_RECORD = 3
TECHNIQUES_PER_RECORD = 3
ACTORS_PER_RECORD = 2
FAMILIES_PER_ACTOR = 2
ALIASES_PER_ACTOR = 8
SOURCES_NAMED = 5  # feeds named in an indicator's description
TEXT_CHARS = 160  # of an article title in a report's name and a reference's description
# What one record may add to a STIX bundle, in bytes of JSON: its own object, then as much of what it
# brings that the bundle does not hold yet (reports, intrusion sets, malware, vulnerabilities, attack
# patterns, the relationships to them) as fits. The bound holds even when no two records share anything:
# N records take at most N * STIX_BYTES_PER_RECORD bytes plus the identity and the marking (STIX_FIXED_BYTES),
# 100 records under 500 KB. Only a record whose own object is larger (a value of kilobytes) passes it.
STIX_BYTES_PER_RECORD = 4_800
STIX_FIXED_BYTES = 1_024


def first_distinct(values: Iterable[str], cap: int, spell: Callable[[str], str] = str.upper) -> list[str]:
    """The first ``cap`` distinct non-blank values in one spelling (upper case by default: CVE and ATT&CK
    ids are case-insensitive), whether the list is long or already short."""
    found: list[str] = []
    for value in values:
        key = spell(value.strip())
        if key and key not in found:
            found.append(key)
            if len(found) == cap:
                break
    return found


def clip(text: str, chars: int = TEXT_CHARS) -> str:
    """``text`` cut to ``chars`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "\u2026"
