"""Curated enrichment data from ``ingest/data`` (shipped as package data, read once per process).

Lists and rules live in data files, not code, so that a reviewer can read and extend them without
touching the extractor.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import Any

import yaml

_PACKAGE = "ingest.data"


def read_text(name: str) -> str:
    """The text of one data file."""
    return resources.files(_PACKAGE).joinpath(name).read_text(encoding="utf-8")


@cache
def word_list(name: str) -> frozenset[str]:
    """A one-entry-per-line list (``#`` starts a comment), lowercased."""
    entries = (line.split("#", 1)[0].strip().lower() for line in read_text(name).splitlines())
    return frozenset(entry for entry in entries if entry)


@cache
def yaml_data(name: str) -> Any:
    """A parsed YAML data file."""
    return yaml.safe_load(read_text(name))


def cue_regex(patterns: list[str], *, anchor_end: bool = False, whole: bool = False) -> re.Pattern[str]:
    """One case-insensitive alternation of cue patterns, each anchored at a word start.

    With ``anchor_end`` the alternation must end the searched text (modulo spaces and punctuation): used
    for "the cue right before a value" checks on a left window. With ``whole`` a cue must end a word
    ("contact" is not found in "contacts"); otherwise cues are word stems ("exfiltrat").
    """
    body = "|".join(f"(?:{pattern})" for pattern in sorted(patterns, key=len, reverse=True))
    suffix = (r"(?!\w)" if whole else "") + (r"[\s\W]*$" if anchor_end else "")
    return re.compile(rf"(?<![\w-])(?:{body}){suffix}", re.IGNORECASE)


@cache
def context_cues(kind: str) -> re.Pattern[str]:
    """The compiled cue alternation of one list of ``ioc_context.yaml``."""
    patterns: list[str] = yaml_data("ioc_context.yaml")[kind]
    return cue_regex(patterns, whole=kind.startswith("benign"))


def domain_in(domain: str, zones: frozenset[str]) -> str | None:
    """The longest zone of ``zones`` that is ``domain`` or a parent of it."""
    labels = domain.split(".")
    for start in range(len(labels)):
        candidate = ".".join(labels[start:])
        if candidate in zones:
            return candidate
    return None


def required_literal(pattern: str) -> str | None:
    """A lowercase substring every match of ``pattern`` contains (3+ characters), or None.

    Used as a prefilter: ``literal in text`` is a fast substring search, so a cue whose literal is
    absent costs nothing, and only the few present cues run their regular expression.
    """
    text = re.sub(r"\\[a-zA-Z]", "\x00", pattern)
    previous = None
    while previous != text:  # optional and alternative parts cannot be relied on: drop them
        previous = text
        text = re.sub(r"\((?:\?[:!=<]+)?[^()]*\)[?*+]?|\[[^\]]*\][?*+]?|[^()]\{[^}]*\}|[^()][?*]", "\x00", text)
    if "|" in text:
        return None
    runs = re.findall(r"[a-z0-9 '&/,-]{3,}", text.replace("\\", ""))
    return max(runs, key=_strength) if runs else None


# Words nearly every English text holds: a literal that is only one of them filters nothing out.
_COMMON = frozenset(
    {"a", "an", "and", "as", "at", "by", "for", "from", "in", "is", "it", "its", "of", "on", "or", "the", "to", "with"}
)


def _strength(literal: str) -> int:
    """How well a literal filters: its length, nothing for a common word ("the ", " from")."""
    return 0 if literal.strip() in _COMMON else len(literal)


def required_literals(pattern: str) -> tuple[str, ...]:
    """Lowercase substrings one of which every match of ``pattern`` contains, or () when none is known.

    ``required_literal`` when it finds one that is not a common word ("to " is in nearly every text);
    otherwise the alternatives of a group the pattern cannot do without (``(?:logged|signed) in with ...``
    holds "logged" or "signed"), the group whose weakest alternative filters best (``_strength``). A
    phrase that starts with a choice of verbs then costs a few substring searches instead of a scan of
    the whole text by the regular expression.
    """
    single = required_literal(pattern)
    if single is not None and _strength(single):
        return (single,)
    best: tuple[str, ...] = ()
    for body in _mandatory_groups(pattern):
        alternatives = [required_literal(part) for part in _top_level_split(body)]
        if all(alternatives) and min(map(_strength, alternatives)) > min(map(_strength, best), default=0):  # type: ignore[arg-type]
            best = tuple(alternatives)  # type: ignore[arg-type]
    return best or (() if single is None else (single,))


def _mandatory_groups(pattern: str) -> list[str]:
    """The bodies of the top-level non-capturing groups of ``pattern`` that no quantifier makes optional
    (a pattern with a top-level ``|`` has none: either side may match)."""
    if _top_level_split(pattern) != [pattern]:
        return []
    groups, depth, start = [], 0, 0
    for index, char in _structure(pattern):
        if char == "(":
            depth, start = depth + 1, start if depth else index
        elif char == ")":
            depth -= 1
            following = pattern[index + 1 : index + 2]
            if not depth and pattern.startswith("(?:", start) and following not in ("?", "*", "{"):
                groups.append(pattern[start + 3 : index])
    return groups


def _structure(pattern: str) -> Iterator[tuple[int, str]]:
    """Each character of ``pattern`` outside escapes and character classes, with its index: the characters
    that give a pattern its structure (groups, alternatives, quantifiers)."""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index = pattern.index("]", index + 2) + 1
            continue
        yield index, char
        index += 1


def _top_level_split(pattern: str) -> list[str]:
    """``pattern`` cut at its ``|`` outside groups and character classes."""
    parts, depth, start = [], 0, 0
    for index, char in _structure(pattern):
        depth += (char == "(") - (char == ")")
        if char == "|" and not depth:
            parts.append(pattern[start:index])
            start = index + 1
    return [*parts, pattern[start:]]


class CueSet:
    """Many word-start cues counted in one text, each run only when its literal part occurs in it.

    One pass per cue over the whole text (or one giant alternation) made classification the slowest
    step; a substring prefilter skips the cues an article cannot contain.
    """

    def __init__(self, cues: list[tuple[str, str, float]]) -> None:
        # Longest first, then by text: a set's order changes with every process (hash seeds), and the
        # order of equal scores must not (a re-enrichment that reorders tags would rewrite every article).
        distinct = sorted({cue for cue, _, _ in cues}, key=lambda cue: (-len(cue), cue))
        position = {cue: index for index, cue in enumerate(distinct)}
        self.targets: list[list[tuple[str, float]]] = [[] for _ in distinct]
        for cue, label, weight in cues:
            self.targets[position[cue]].append((label, weight))
        self.patterns = [(required_literal(cue.lower()), re.compile(cue, re.IGNORECASE)) for cue in distinct]

    def counts(self, text: str) -> dict[int, int]:
        """How many times each distinct cue (by index) starts a word of ``text``."""
        lowered = text.lower()
        found: dict[int, int] = {}
        for index, (literal, pattern) in enumerate(self.patterns):
            if literal is not None and literal not in lowered:
                continue
            count = sum(1 for match in pattern.finditer(lowered) if _word_start(lowered, match.start()))
            if count:
                found[index] = count
        return found

    def scores(self, text: str, *, cap: int = 1_000_000, times: float = 1.0) -> dict[str, float]:
        """Label -> sum of weight x min(occurrences, cap) x times."""
        totals: dict[str, float] = {}
        for index, count in self.counts(text).items():
            for label, weight in self.targets[index]:
                totals[label] = totals.get(label, 0.0) + weight * min(count, cap) * times
        return totals


def _word_start(text: str, index: int) -> bool:
    return index == 0 or not (text[index - 1].isalnum() or text[index - 1] in "_-")
