"""Substring search on IOC values through an index, the same rule on every backend (``IocQuery.value_contains``).

A needle of :data:`MIN_SUBSTRING` characters or more matches anywhere in the value, case-sensitively: found
through the values' trigrams (SQLite's FTS5 ``trigram`` tokenizer, sqlite.org/fts5.html#the_trigram_tokenizer;
on MongoDB a multikey index on each record's distinct trigrams, every trigram of the needle required), then
checked against the value itself. A shorter needle has no trigram to look up, so it matches as a prefix of
the value, through the (type, value) key: no search scans every record.
"""

from __future__ import annotations

MIN_SUBSTRING = 3


def trigrams(text: str) -> list[str]:
    """The distinct three-character substrings of ``text``, sorted."""
    return sorted({text[i : i + MIN_SUBSTRING] for i in range(len(text) - MIN_SUBSTRING + 1)})


def prefix_only(needle: str) -> bool:
    """Whether ``needle`` is too short for the trigram index and matches as a prefix."""
    return len(needle) < MIN_SUBSTRING


def prefix_end(prefix: str) -> str:
    """The least string above every string starting with ``prefix`` (a range ``[prefix, end)`` holds them)."""
    return prefix + "\U0010ffff"
