"""Helpers shared by the enrichment tests (``from enrich_support import found``)."""

from __future__ import annotations

from ingest.enrich.iocs import extract_iocs
from ingest.enrich.textprep import build_document


def found(text: str, title: str = "") -> set[tuple[str, str]]:
    """(type, value) of every IOC the extractor finds in an article of ``title`` and ``text``."""
    return {(ioc.type, ioc.value) for ioc in extract_iocs(build_document(title, text))}
