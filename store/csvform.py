"""The CSV row of an article (spec, "CSV column order for article export"), encoded from its list form.

In the store layer because SQLite keeps each article's CSV line encoded beside its list form (so
a CSV export then streams stored bytes, as NDJSON does); ``exporters.articles`` serves the same encoder.
Cells: arrays and objects are JSON-encoded in their cell (lossless, one cell per spec column); booleans
are ``true``/``false``; absent values are empty cells; a text cell that a spreadsheet would read as a
formula gets a leading apostrophe (OWASP, "CSV Injection").
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

import orjson

# Spec, "CSV column order for article export".
CSV_COLUMNS: tuple[str, ...] = (
    "id", "published_at", "fetched_at", "modified_at", "title", "url", "canonical_url", "summary", "ai_summary",
    "image_url", "source_name", "source_type", "source_tier", "category", "category_legacy", "content_type",
    "severity_score", "severity_label", "tech_tags", "industry_tags", "threat_actors", "has_iocs", "ioc_count",
    "mitre_techniques", "cve_ids", "score", "upvotes", "downvotes", "comment_count", "vouch_count", "rank_score",
    "submission_type",
)

# A text cell starting with one of these is read as a formula by spreadsheet programs (see above).
# Numbers are written as numbers and never negative here.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> str:
    if type(value) is str:  # most cells: checked first
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        text = orjson.dumps(value).decode()
    elif isinstance(value, (int, float)):
        return str(value)
    else:
        text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _csv_lines(rows: Iterable[Iterable[str]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)  # RFC 4180 line ends and quoting
    return buffer.getvalue().encode("utf-8")


def csv_header(columns: tuple[str, ...] = CSV_COLUMNS) -> bytes:
    return _csv_lines([columns])


def csv_lines(rows: Iterable[dict[str, Any]], columns: tuple[str, ...] = CSV_COLUMNS) -> bytes:
    """CSV rows of ``columns`` from list-form rows (``severity_label`` etc. computed there), written by one
    writer: a writer and a buffer per row cost more than the row itself."""
    return _csv_lines([_cell(row.get(name)) for name in columns] for row in rows)


def csv_line(row: dict[str, Any], columns: tuple[str, ...] = CSV_COLUMNS) -> bytes:
    """One CSV row of ``columns`` from a list-form row."""
    return csv_lines([row], columns)
