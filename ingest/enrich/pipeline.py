"""``enrich``: one article's title and text (or HTML) in, every enrichment field out; offline.

Order: lines and sections (``textprep``) -> IOCs (``iocs``), CVE ids, ATT&CK techniques (``attack``),
actors (``actors``) -> classification (``classify``) -> summaries (``summary``) -> hashtag tags.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from ingest.enrich.actors import extract_actors
from ingest.enrich.attack import techniques_with_evidence
from ingest.enrich.classify import Findings, classify
from ingest.enrich.iocs import extract_iocs
from ingest.enrich.model import Enrichment
from ingest.enrich.summary import extractive_summary, lead_summary
from ingest.enrich.textprep import build_document, html_to_text, prose_sentences
from store.indicators import normalize
from store.records import ms, utcnow

# CVE ids in any casing, with ASCII or Unicode dashes (issue 7), optionally "CVE 2024-..." with a space.
_DASH = r"[\-\u2010-\u2015\u2212]"
_CVE = re.compile(rf"(?<![\w-])CVE(?:\s|{_DASH}){{0,2}}(\d{{4}}){_DASH}(\d{{4,7}})(?!\d)", re.IGNORECASE)
_HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
CATEGORIZED_BY = "rules"
MAX_TAGS = 8


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


def enrich(title: str, text: str, *, html: str | None = None, source_name: str = "",
           now: datetime | None = None) -> Enrichment:
    """Every enrichment field of one article.

    ``text`` is the extracted main text; when it is empty and ``html`` is given, the text is taken from
    the HTML. ``source_name`` is accepted for callers that know it (not used by the rules yet).
    """
    if not text.strip() and html:
        html_title, text = html_to_text(html)
        title = title or html_title
    document = build_document(title, text)
    full_text = document.text
    iocs = extract_iocs(document)
    cves = extract_cves(full_text)
    sentences = prose_sentences(document)  # read by the technique classifier and both summaries
    explained = techniques_with_evidence(full_text, sentences)
    techniques = [record for record, _ in explained]
    actors = extract_actors(full_text)
    findings = Findings(len(cves), len(iocs), len(actors), len(techniques))
    body = "\n".join(line.text for line in document.body_lines)
    result = classify(document.title, body, findings)
    return Enrichment(
        iocs=iocs, cve_ids=cves, mitre_techniques=techniques, threat_actors=actors,
        technique_evidence=[f"{record.id}: {why}" for record, why in explained],
        category=result.category, content_type=result.content_type,
        severity_score=result.severity_score, severity_reasons=result.severity_reasons,
        tech_tags=result.tech_tags, industry_tags=result.industry_tags,
        summary=lead_summary(document.title, sentences), ai_summary=extractive_summary(document.title, sentences),
        tags=_hashtags(result.category, result.tech_tags, actors, cves, full_text),
        ai_classification=result.category, ai_classification_confidence=result.confidence,
        categorized_by=CATEGORIZED_BY, categorized_at=ms(now) if now else utcnow(),
    )


def enrich_file(path: Path) -> tuple[str, Enrichment]:
    """(stem, enrichment) of a text file (first line is the title) or an HTML file (by suffix or content)."""
    content = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix.lower() in _HTML_SUFFIXES or content.lstrip()[:15].lower().startswith(("<!doctype html", "<html")):
        title, text = html_to_text(content)
    else:
        title, _, text = content.partition("\n")
    return path.stem, enrich(title.strip(), text)
