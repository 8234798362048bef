"""One failing extractor loses only its own fields: logged once, counted, and named in ``errors``."""

from __future__ import annotations

import logging

import pytest
from prometheus_client import REGISTRY

from ingest.enrich import enrich, pipeline

TEXT = ("The operators exploited CVE-2024-3400 and beaconed to hxxps://invoice-sync[.]top/gate.php. "
        "Researchers attribute the campaign to APT29.")


def _failures(extractor: str) -> float:
    return REGISTRY.get_sample_value("ctiwire_enrich_failures_total", {"extractor": extractor}) or 0.0


def _boom(*_args: object) -> object:
    raise RuntimeError("boom " + "x" * 500)


def test_a_failing_extractor_empties_only_its_own_fields(monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    before = _failures("iocs")
    monkeypatch.setattr(pipeline, "extract_iocs", _boom)
    with caplog.at_level(logging.DEBUG, logger="ingest.enrich.pipeline"):
        found = enrich("Loader campaign", TEXT, article_id="article-42")
    assert found.iocs == [] and found.cve_ids == ["CVE-2024-3400"] and found.summary
    assert len(found.errors) == 1 and found.errors[0].startswith("iocs: RuntimeError: boom")
    assert found.to_cli()["error"] == found.errors[0] and len(found.errors[0]) < 220
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "article-42" in warnings[0].getMessage() and "iocs" in warnings[0].getMessage()
    assert warnings[0].exc_info is None  # the traceback goes to DEBUG only
    assert any(r.levelno == logging.DEBUG and r.exc_info for r in caplog.records)
    assert _failures("iocs") == before + 1


def test_a_failing_classifier_leaves_the_article_unclassified(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "classify", _boom)
    found = enrich("Loader campaign", TEXT)
    assert (found.category, found.ai_classification_confidence, found.severity_score) == ("threat-intel", 0.0, 0.0)
    assert found.iocs and found.errors[0].startswith("classify: ")
    monkeypatch.undo()
    assert "error" not in enrich("Loader campaign", TEXT).to_cli()


def test_without_an_id_the_log_names_the_article_by_a_hash_of_its_title(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(pipeline, "extract_actors", _boom)
    with caplog.at_level(logging.WARNING, logger="ingest.enrich.pipeline"):
        found = enrich("Loader campaign", TEXT)
    assert found.threat_actors == [] and found.iocs
    assert "title-sha256:" in caplog.records[0].getMessage() and "Loader campaign" not in caplog.records[0].getMessage()
