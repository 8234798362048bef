"""Indicator lists without an "Indicators" heading: which line opens one, which lines belong to it.

bench/LABELLING.md counts a value "wherever it appears: in prose, in a table, in an indicator list". Reports
list infrastructure under any heading or none, so a list is also opened by:

- a prose line that introduces the lines after it as malicious ("... the following C2 servers:", "The
  sender addresses below were all used by the crew.");
- a short caption line that names them so ("Source addresses in CloudTrail (first and last seen, UTC)");
- a table header with a type or indicator column, or a column a malicious cue names ("type,value,comment",
  "| Type | Value | Notes |", "Family | C2").

The same shapes can say the values are NOT malicious ("... and why each value is a false positive:",
"Hosts to allow", "Sinkholed domains"): those open a ``benign`` list, whose values are not indicators.
"""

from __future__ import annotations

import re
from functools import cache

from ingest.enrich.resources import context_cues, cue_regex, yaml_data

BULLET = re.compile(r"^\s*(?:[-*\u2022\u25aa\u25e6>]|\d{1,3}[.)])\s+")
LOOKS_TECHNICAL = re.compile(r"\w[.:@]\w|\[\.\]|\(\.\)|\[dot\]|\(dot\)|[0-9a-f]{16}", re.IGNORECASE)
# Two spaces or more between words: the columns of a plain-text table (tabs are read as two spaces); not
# after a sentence's punctuation, where some writers put two spaces.
COLUMN_GAP = re.compile(r"[^\s.!?,;:] {2,}(?=\S)")
_WORDS = re.compile(r"[A-Za-z][A-Za-z'-]*")
_FORWARD = re.compile(r"\b(?:below|following|as follows|listed here)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_TYPE_COLUMN = re.compile(
    r"(?:(?:ioc|indicator|observable|artifact|artefact|value)[ _-]?)?(?:type|kind)s?|"
    r"indicators?|iocs?|observables?",
    re.IGNORECASE,
)
_MAX_ITEM_WORDS = 10  # a value with a short note ("forwarding target of the mailbox rule")
_MAX_CAPTION_WORDS = 12
_MAX_CELL_WORDS = 4


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    data = yaml_data("ioc_context.yaml")
    return {
        "ioc": cue_regex(data["indicator_headings"]),
        "reference": cue_regex(data["reference_headings"]),
        "not_ioc": cue_regex(data["not_ioc_lists"]),
        "not_ioc_heading": cue_regex(data["not_ioc_lists"] + data["not_ioc_headings"]),
    }


def classify_heading(heading: str) -> str:
    """The section a heading opens: ``benign`` (values said not to be malicious), ``reference``, ``ioc``
    or ``body``. A heading that says its values are clean wins over an indicator word in it."""
    patterns, stripped = _patterns(), heading.strip()
    if patterns["not_ioc_heading"].search(stripped):
        return "benign"
    if patterns["reference"].match(stripped):
        return "reference"
    return "ioc" if patterns["ioc"].search(heading) else "body"


def list_item(raw: str) -> bool:
    """A line of a list: indented, bulleted, a table row (pipes or column gaps), a few tokens, or a value with
    a short note."""
    if raw[:1].isspace() or BULLET.match(raw) or " | " in raw or len(raw.split()) <= 4 or COLUMN_GAP.search(raw):
        return True
    return bool(LOOKS_TECHNICAL.search(raw)) and len(_WORDS.findall(raw)) <= _MAX_ITEM_WORDS


def opens_list(line: str, following: str) -> str | None:
    """``ioc`` or ``benign`` when ``line`` (refanged, not a heading) opens the list that ``following``
    starts, else None."""
    if not following or not list_item(following):
        return None
    stripped = line.strip()
    if not LOOKS_TECHNICAL.search(stripped):
        header = table_header(stripped)
        caption = stripped[-1:] not in ".!?" and len(_WORDS.findall(stripped)) <= _MAX_CAPTION_WORDS
        if header is None and caption and classify_heading(stripped) in ("ioc", "benign"):
            header = classify_heading(stripped)
        if header is not None:
            return header
    return _introduction(stripped)


def _introduction(text: str) -> str | None:
    """What a prose line ending with a colon, or a sentence of it pointing below, presents the list as."""
    sentences = [sentence for sentence in _SENTENCE.split(text) if _FORWARD.search(sentence)]
    if text.endswith(":"):
        sentences.append(text)
    if any(_patterns()["not_ioc"].search(sentence) for sentence in sentences):
        return "benign"
    if any(context_cues("malicious").search(sentence) for sentence in sentences):
        return "ioc"
    return None


def _cells(line: str) -> list[str]:
    """The cells of a table row: between pipes, column gaps, or commas and semicolons without a space after
    them (CSV); a prose line has none."""
    if "|" in line:
        return line.split("|")
    if COLUMN_GAP.search(line):
        return re.split(r" {2,}", line)
    for delimiter in ",;":
        if delimiter in line and f"{delimiter} " not in line:
            return line.split(delimiter)
    return []


def table_row(line: str) -> bool:
    """A row of a table: cells between pipes, column gaps, or CSV fields."""
    return len(_cells(line.strip(" |"))) >= 2


def table_header(line: str) -> str | None:
    """``ioc`` when ``line`` is the header row of a table with a type or indicator column (or a column
    named by a malicious cue: "C2", "Payload fetched from"), ``benign`` for one whose column says its values
    are not malicious, else None."""
    cells = [cell.strip() for cell in _cells(line.strip(" |")) if cell.strip()]
    if len(cells) < 2 or any(len(_WORDS.findall(cell)) > _MAX_CELL_WORDS for cell in cells):
        return None
    if _patterns()["not_ioc"].search(line):
        return "benign"
    named = any(_TYPE_COLUMN.fullmatch(cell) or context_cues("malicious").search(cell) for cell in cells)
    return "ioc" if named else None
