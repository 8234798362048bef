"""The lead classifiers (category and severity from a title and lead) and how they weigh with the rules."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from ingest.enrich import classify, leads, textmodel
from ingest.enrich import severity as severity_module
from ingest.enrich.classify import Findings, category_scores
from ingest.enrich.severity import Evidence, Weighing, severity, weighed, weighing, weighing_features
from store.records import CATEGORIES

LEVELS = {"critical", "high", "medium", "low"}


def test_the_shipped_leads_cover_every_category_and_level() -> None:
    texts, labels = leads.examples()
    assert len(texts) >= 600 and all(len(text.split()) >= 30 for text in texts)
    per_category = Counter(labels["category"])
    assert set(per_category) == set(CATEGORIES) and min(per_category.values()) >= 30
    assert set(labels["severity"]) == LEVELS and min(Counter(labels["severity"]).values()) >= 50


def test_probabilities_are_one_distribution_per_field() -> None:
    read = leads.probabilities("Ransomware gang hits hospital chain", "Systems were encrypted overnight.")
    assert set(read) == {"category", "severity"}
    assert set(read["category"]) == set(CATEGORIES) and set(read["severity"]) == LEVELS
    assert all(abs(sum(field.values()) - 1.0) < 1e-5 for field in read.values())


@pytest.mark.parametrize(
    ("title", "lead", "field", "expected"),
    [
        (
            "Data protection authority fines retailer EUR 4 million over loyalty-card records",
            "The regulator said the company kept customer data longer than the law allows and failed to answer "
            "access requests; the fine follows a two-year investigation and the retailer says it will appeal.",
            "category",
            "compliance",
        ),
        (
            "Hacktivist DDoS waves knock regional bank websites offline for hours",
            "A pro-Russian group flooded the online banking portals of four banks with junk traffic on Tuesday, "
            "taking them offline for most of the afternoon before mitigation services absorbed the attack.",
            "category",
            "network-security",
        ),
        (
            "Vendor launches a password manager for small businesses",
            "The new plan adds shared vaults, single sign-on and an admin console; pricing starts at four dollars "
            "per user a month and the company says a free trial runs for thirty days.",
            "severity",
            "low",
        ),
    ],
)
def test_clear_leads_read_as_what_they_are(title: str, lead: str, field: str, expected: str) -> None:
    """Leads written for this test, none of them in the training data."""
    read = leads.probabilities(title, lead)[field]
    assert max(read, key=read.__getitem__) == expected


def _evidence(lead: dict[str, float], *, iocs: int = 0, actors: int = 0, techniques: int = 0) -> Evidence:
    return Evidence("Text.", "threat-intel", True, 0, iocs, actors, techniques, lead)


def test_without_a_lead_reading_the_rules_decide_alone() -> None:
    assert weighed("critical", _evidence({})) == "critical"


def test_the_weighing_reads_the_lead_the_rules_level_and_the_findings() -> None:
    lead = {"critical": 0.1, "high": 0.6, "medium": 0.2, "low": 0.1}
    features = weighing_features("medium", _evidence(lead, iocs=7, actors=1, techniques=2))
    assert features[:4] == pytest.approx([math.log(p + 1e-3) for p in (0.1, 0.6, 0.2, 0.1)])
    assert features[4:] == [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1 / 3, 2 / 3, 1.0]


def test_the_shipped_weighing_has_one_weight_per_feature_and_level() -> None:
    shipped = weighing()
    assert sorted(shipped.levels) == sorted(LEVELS) and len(shipped.intercepts) == 4
    assert {len(row) for row in shipped.weights} == {len(weighing_features("low", _evidence({})))}


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_a_clear_lead_that_the_rules_agree_with_decides(level: str) -> None:
    lead = dict.fromkeys(LEVELS, 0.02) | {level: 0.94}
    assert weighed(level, _evidence(lead)) == level


def test_what_the_body_shows_beyond_its_lead_weighs_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """An actor's campaign with published indicators reads as high with the shipped weights, where the
    same lead without them stays medium."""
    lead = {"critical": 0.03, "high": 0.30, "medium": 0.62, "low": 0.05}
    assert weighed("high", _evidence(lead)) == "medium"
    assert weighed("high", _evidence(lead, iocs=9, actors=1, techniques=4)) == "high"
    flat = Weighing(("critical", "high", "medium", "low"), ((0.0,) * 13,) * 4, (0.0, 0.0, 1.0, 0.0))
    monkeypatch.setattr(severity_module, "weighing", lambda: flat)
    assert weighed("high", _evidence(lead, iocs=9)) == "medium"  # the weights decide, whatever they are


def test_severity_reasons_name_both_readings() -> None:
    evidence = Evidence(
        "Vendor ships a new console for its firewall.",
        "network-security",
        False,
        0,
        0,
        0,
        0,
        {"low": 0.9, "medium": 0.06, "high": 0.03, "critical": 0.01},
    )
    score, reasons = severity(evidence)
    assert reasons[:3] == ["rubric level: low", "rules: low", "title and lead read as low (0.90)"]
    assert 0.1 <= score < 4.0


def test_the_lead_adds_its_weighted_probabilities_to_the_category_scores() -> None:
    title, body = "Quarterly update", "Short note."
    rules = category_scores(title, body, Findings(0, 0, 0, 0))
    lead = dict.fromkeys(CATEGORIES, 0.0) | {"compliance": 0.75, "data-security": 0.25}
    both = category_scores(title, body, Findings(0, 0, 0, 0), lead)
    assert both["compliance"] == pytest.approx(rules["compliance"] + 0.75 * classify.LEAD_WEIGHT)
    assert both["data-security"] == pytest.approx(rules["data-security"] + 0.25 * classify.LEAD_WEIGHT)


def test_the_model_is_kept_under_its_fingerprint_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTIWIRE_MODEL_DIR", str(tmp_path))
    leads.model.cache_clear()
    try:
        first = leads.model()
        assert [path.name for path in tmp_path.iterdir()] == [f"leads-{leads.fingerprint()}.npz"]
        leads.model.cache_clear()

        def no_training() -> textmodel.Model:
            raise AssertionError("trained again")

        monkeypatch.setattr(leads, "train", no_training)
        assert leads.model().classes == first.classes
    finally:
        leads.model.cache_clear()


def test_a_change_of_data_or_settings_changes_the_fingerprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = leads.fingerprint()
    monkeypatch.setitem(leads._SETTINGS, "C", 1.0)
    assert leads.fingerprint() != before
    monkeypatch.undo()
    copy = tmp_path / "leads"
    copy.mkdir()
    for path in leads.LEADS.glob("*.yaml"):
        (copy / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(leads, "LEADS", copy)
    assert leads.fingerprint() == before
    (copy / "part-a.yaml").write_text((copy / "part-a.yaml").read_text() + "\n# one more line\n")
    assert leads.fingerprint() != before
