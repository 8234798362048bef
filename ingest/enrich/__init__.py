"""Offline enrichment of articles: IOCs, CVEs, ATT&CK, actors, classification, summaries.

Public API: ``enrich(title, text, html=..., source_name=..., now=...) -> Enrichment`` and
``enrich_file(path) -> (stem, Enrichment)``; ``Enrichment.to_cli()`` is the ``ctiwire enrich`` JSON.
Reference data is read from installed packages and ``ingest/data`` once per process; nothing is fetched.
"""

from ingest.enrich.model import CLI_IOC_TYPES, Enrichment
from ingest.enrich.pipeline import enrich, enrich_file, extract_cves

__all__ = ["CLI_IOC_TYPES", "Enrichment", "enrich", "enrich_file", "extract_cves"]
