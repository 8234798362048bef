"""``enrich``: one article's title and text (or HTML) in, every enrichment field out; offline.

Order: lines and sections (``textprep``) -> IOCs (``iocs``), CVE ids, ATT&CK techniques (``attack``),
actors (``actors``) -> classification (``classify``) -> summaries (``summary``) -> hashtag tags.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from ingest.enrich.actors import extract_actors
from ingest.enrich.attack import techniques_with_evidence
from ingest.enrich.classify import Classification, Findings, classify
from ingest.enrich.iocs import extract_iocs
from ingest.enrich.model import Enrichment
from ingest.enrich.summary import extractive_summary, lead_summary
from ingest.enrich.textprep import Document, build_document, html_to_text, prose_sentences
from store.indicators import normalize
from store.records import ArticleIoc, MitreTechnique, ms, utcnow
from telemetry import metrics

log = logging.getLogger(__name__)
T = TypeVar("T")

# CVE ids in any casing, with ASCII or Unicode dashes, optionally "CVE 2024-..." with a space.
_DASH = r"[\-\u2010-\u2015\u2212]"
_CVE = re.compile(rf"(?<![\w-])CVE(?:\s|{_DASH}){{0,2}}(\d{{4}}){_DASH}(\d{{4,7}})(?!\d)", re.IGNORECASE)
_HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
CATEGORIZED_BY = "rules"
MAX_TAGS = 8
# What an article gets when the classifier fails on it: the broadest category, confidence 0, lowest severity.
UNCLASSIFIED = Classification("threat-intel", 0.0, "security", ["unclassified"], [], 0.0, [])
_MAX_ERROR = 200


@dataclass(slots=True)
class _Guard:
    """Runs the extractors of one article: a failing one loses only its own output, never the article's.

    Each failure is logged once (one WARNING line: article, extractor, exception; the traceback at DEBUG),
    counted in ``ctiwire_enrich_failures_total{extractor}`` and listed in ``Enrichment.errors``.
    """

    article_id: str
    title: str
    errors: list[str] = field(default_factory=list)

    def run(self, extractor: str, empty: T, call: Callable[[], T]) -> T:
        try:
            return call()
        except Exception as exc:  # any defect of one extractor, on any text
            message = f"{type(exc).__name__}: {exc}"[:_MAX_ERROR]
            article = _article_key(self.article_id, self.title)
            log.warning("enrichment of article %s: extractor %s failed: %s", article, extractor, message)
            log.debug("extractor %s failed on article %s", extractor, article, exc_info=True)
            metrics().enrich_failures.labels(extractor).inc()
            self.errors.append(f"{extractor}: {message}")
            return empty


def _article_key(article_id: str, title: str) -> str:
    """The article's id for the log, or a hash of its title when the caller has no id (files, tests)."""
    if article_id:
        return article_id
    return "title-sha256:" + hashlib.sha256(title.encode("utf-8", "backslashreplace")).hexdigest()[:16]


def extract_cves(text: str) -> list[str]:
    """Unique CVE ids in order of first mention, spelled ``CVE-YYYY-NNNN``."""
    found: dict[str, None] = {}
    for match in _CVE.finditer(text):
        found.setdefault(normalize("cve", f"CVE-{match.group(1)}-{match.group(2)}"), None)
    return list(found)


def _hashtags(category: str, tech: list[str], actors: list[str], cves: list[str], text: str) -> list[str]:
    words = [category, *(["ransomware"] if re.search(r"ransomware", text, re.IGNORECASE) else []),
             *actors[:2], *tech[:3], *(cve.lower() for cve in cves[:2])]
    tags: dict[str, None] = {}
    for word in words:
        tags.setdefault("#" + re.sub(r"[^a-z0-9]+", "-", word.lower()).strip("-"), None)
    return list(tags)[:MAX_TAGS]


def _prepared(title: str, text: str) -> tuple[Document, list[str]]:
    document = build_document(title, text)
    return document, prose_sentences(document)  # sentences: read by the technique classifier and both summaries


def enrich(title: str, text: str, *, html: str | None = None, source_name: str = "",
           now: datetime | None = None, article_id: str = "") -> Enrichment:
    """Every enrichment field of one article; never raises (a failing extractor's fields stay empty).

    ``text`` is the extracted main text; when it is empty and ``html`` is given, the text is taken from
    the HTML. ``source_name`` is accepted for callers that know it (not used by the rules yet);
    ``article_id`` names the article in the log when an extractor fails.
    """
    guard = _Guard(article_id, title)
    if not text.strip() and html:
        html_title, text = guard.run("html", ("", ""), lambda: html_to_text(html))
        title = title or html_title
    document, sentences = guard.run("textprep", (Document(title=""), list[str]()), lambda: _prepared(title, text))
    full_text = document.text
    iocs: list[ArticleIoc] = guard.run("iocs", [], lambda: extract_iocs(document))
    cves: list[str] = guard.run("cves", [], lambda: extract_cves(full_text))
    explained: list[tuple[MitreTechnique, str]] = guard.run(
        "attack", [], lambda: techniques_with_evidence(full_text, sentences))
    techniques = [record for record, _ in explained]
    actors: list[str] = guard.run("actors", [], lambda: extract_actors(full_text))
    titled = sum(name in document.title.lower() for name in actors)
    findings = Findings(len(cves), len(iocs), len(actors), len(techniques), titled)
    result = guard.run("classify", UNCLASSIFIED, lambda: classify(
        document.title, "\n".join(line.text for line in document.body_lines), findings))
    summary, ai_summary = guard.run("summary", ("", ""), lambda: (
        lead_summary(document.title, sentences), extractive_summary(document.title, sentences)))
    tags: list[str] = guard.run(
        "tags", [], lambda: _hashtags(result.category, result.tech_tags, actors, cves, full_text))
    return Enrichment(
        iocs=iocs, cve_ids=cves, mitre_techniques=techniques, threat_actors=actors,
        technique_evidence=[f"{record.id}: {why}" for record, why in explained],
        category=result.category, content_type=result.content_type,
        severity_score=result.severity_score, severity_reasons=result.severity_reasons,
        tech_tags=result.tech_tags, industry_tags=result.industry_tags,
        summary=summary, ai_summary=ai_summary, tags=tags,
        ai_classification=result.category, ai_classification_confidence=result.confidence,
        categorized_by=CATEGORIZED_BY, categorized_at=ms(now) if now else utcnow(), errors=guard.errors,
    )


def enrich_file(path: Path) -> tuple[str, Enrichment]:
    """(stem, enrichment) of a text file (first line is the title) or an HTML file (by suffix or content)."""
    content = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix.lower() in _HTML_SUFFIXES or content.lstrip()[:15].lower().startswith(("<!doctype html", "<html")):
        return path.stem, enrich("", "", html=content)  # read behind the guard, as the "html" extractor
    title, _, text = content.partition("\n")
    return path.stem, enrich(title.strip(), text)
