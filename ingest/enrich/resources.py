"""Curated enrichment data from ``ingest/data`` (shipped as package data, read once per process).

Lists and rules live in data files, not code, so that a reviewer can read and extend them without
touching the extractor (issue 7: "a curated table of behaviour phrases ... kept in data, not code").
"""

from __future__ import annotations

import re
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
