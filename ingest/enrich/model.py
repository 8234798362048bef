"""The result of enriching one article, and its ``ctiwire enrich`` JSON form."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from store.ioctypes import specs
from store.records import ArticleIoc, MitreTechnique, severity_label

# The IOC keys of ``ctiwire enrich`` output, in the order the issue lists them: the registry's types the
# article scan finds (CVE ids and techniques have keys of their own).
CLI_IOC_TYPES: tuple[str, ...] = tuple(spec.name for spec in specs() if isinstance(spec.scan, str))


@dataclass(frozen=True, slots=True)
class Enrichment:
    """Every enrichment field of the spec's article, computed offline from its title and text.

    ``iocs`` holds network, host, file-hash and e-mail indicators; CVE ids are in ``cve_ids`` (the
    pipeline may also store them as ``cve`` IOC records, see ``all_iocs``).
    """

    iocs: list[ArticleIoc]
    cve_ids: list[str]
    mitre_techniques: list[MitreTechnique]
    threat_actors: list[str]
    category: str
    content_type: str
    severity_score: float
    severity_reasons: list[str]
    tech_tags: list[str]
    industry_tags: list[str]
    summary: str
    ai_summary: str
    tags: list[str]
    ai_classification: str
    ai_classification_confidence: float
    categorized_by: str
    categorized_at: datetime
    technique_evidence: list[str] = field(default_factory=list)  # "T1003.001: phrase: ...", one per technique
    errors: list[str] = field(default_factory=list)  # "extractor: ExceptionType: message", one per failed extractor

    @property
    def severity_label(self) -> str:
        return severity_label(self.severity_score)

    def all_iocs(self) -> list[ArticleIoc]:
        """The indicators plus one ``cve`` record per CVE id (the spec's IOC types include ``cve``)."""
        return [*self.iocs, *(ArticleIoc("cve", cve, "high") for cve in self.cve_ids)]

    def to_cli(self, *, explain: bool = False) -> dict[str, Any]:
        """The object ``ctiwire enrich`` prints for one file; with ``explain``, why
        (the severity rubric's reasons and each technique's id, phrase or classified sentence)."""
        grouped: dict[str, list[str]] = {kind: [] for kind in CLI_IOC_TYPES}
        for ioc in self.iocs:
            grouped.setdefault(ioc.type, []).append(ioc.value)
        shape = {
            "iocs": grouped,
            "cves": list(self.cve_ids),
            "attack_techniques": [technique.id for technique in self.mitre_techniques],
            "threat_actors": list(self.threat_actors),
            "category": self.category,
            "severity_label": self.severity_label,
            "severity_score": self.severity_score,
        }
        if self.errors:
            shape["error"] = "; ".join(self.errors)
        if explain:
            shape |= {"severity_reasons": list(self.severity_reasons), "attack_evidence": list(self.technique_evidence)}
        return shape
