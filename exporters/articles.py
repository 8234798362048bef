"""Article encoders: the list-form row, the single-read form, NDJSON lines and CSV rows (spec, Article).

Pure functions from records to bytes, so the server streams them and a bulk job could reuse them.
CSV cells: arrays and objects are JSON-encoded in their cell (lossless, and one cell per spec column);
booleans are ``true``/``false``; absent values are empty cells.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import orjson

from store.records import Article, iso

# Spec, "CSV column order for article export".
CSV_COLUMNS: tuple[str, ...] = (
    "id", "published_at", "fetched_at", "modified_at", "title", "url", "canonical_url", "summary", "ai_summary",
    "image_url", "source_name", "source_type", "source_tier", "category", "category_legacy", "content_type",
    "severity_score", "severity_label", "tech_tags", "industry_tags", "threat_actors", "has_iocs", "ioc_count",
    "mitre_techniques", "cve_ids", "score", "upvotes", "downvotes", "comment_count", "vouch_count", "rank_score",
    "submission_type",
)
EXPANSIONS: tuple[str, ...] = ("mitre", "iocs", "cves", "threat_actors")
NVD_URL = "https://nvd.nist.gov/vuln/detail/"


def list_row(article: Article, expand: Iterable[str] = ()) -> dict[str, Any]:
    """The flat list form (``Article.list_form``) plus the requested expansions."""
    row = article.list_form()
    _expand(row, article, set(expand))
    return row


def _expand(row: dict[str, Any], article: Article, wanted: set[str]) -> None:
    """``expand`` shapes (documented in the OpenAPI description; the spec leaves them "not shown")."""
    if "iocs" in wanted:
        row["iocs"] = [{"type": i.type, "value": i.value, "confidence": i.confidence} for i in article.iocs]
    if "cves" in wanted:
        row["cves"] = [{"id": c, "url": NVD_URL + c} for c in article.cve_ids]
    if "threat_actors" in wanted:
        techniques = [t.id for t in article.mitre_techniques]
        row["threat_actor_details"] = [{"name": a, "techniques": techniques} for a in article.threat_actors]


def sparse(row: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """Only the named fields, in the row's order; ``id`` is always kept; unknown names are dropped."""
    if not fields:
        return row
    keep = {"id", *fields}
    return {k: v for k, v in row.items() if k in keep}


def publisher_domain(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host.removeprefix("www.")


def single_form(article: Article) -> dict[str, Any]:
    """The single-read form: its own field names (spec, "Article (single-read form)")."""
    return {
        "id": article.id, "title": article.title, "url": article.url, "source": publisher_domain(article.url),
        "published_at": iso(article.published_at), "summary": article.ai_summary or article.summary,
        "categories": [article.category], "severity": article.severity_label, "tags": list(article.tags),
        "iocs": [{"type": i.type, "value": i.value} for i in article.iocs], "cves": list(article.cve_ids),
        "threat_actors": list(article.threat_actors),
        "mitre_techniques": [{"id": t.id, "name": t.name} for t in article.mitre_techniques],
        "points": article.score, "comment_count": article.comment_count,
    }


# A text cell starting with one of these is read as a formula by spreadsheet programs: it gets a leading
# apostrophe (OWASP, "CSV Injection"). Numbers are written as numbers and never negative here.
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
    writer: a writer and a buffer per row cost more than the row itself (issue 17)."""
    return _csv_lines([_cell(row.get(name)) for name in columns] for row in rows)


def csv_line(row: dict[str, Any], columns: tuple[str, ...] = CSV_COLUMNS) -> bytes:
    """One CSV row of ``columns`` from a list-form row."""
    return csv_lines([row], columns)
