"""Article encoders: the list-form row, the single-read form, NDJSON lines and CSV rows (spec, Article).

Pure functions from records to bytes, so the server streams them and a bulk job could reuse them.
The CSV encoder lives in ``store.csvform`` (SQLite stores each article's CSV line) and is served from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from store.csvform import CSV_COLUMNS, csv_header, csv_line, csv_lines
from store.records import Article, iso

__all__ = ["CSV_COLUMNS", "EXPANSIONS", "csv_header", "csv_line", "csv_lines", "list_row", "single_form", "sparse"]

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
