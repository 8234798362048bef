"""The enrichment bench scores a second analyst's labels against a set's own: techniques as P / R / F1,
category and severity as accuracies, and says nothing of a field no second labelling exists for."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_enrich.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_enrich_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


LABELS = """\
a1-breach: {category: attacks-breaches, severity: high, techniques: [T1566.001, T1486]}
a2-patch: {category: vulnerabilities, severity: critical, techniques: []}
a3-guide: {category: security-operations, severity: low}
"""


def labelled_set(root: Path, **second: str) -> Path:
    """A tiny labelled set with the given second-analyst files (name -> YAML text)."""
    (root / "second-analyst").mkdir(parents=True)
    (root / "labels.yaml").write_text(LABELS, encoding="utf-8")
    for name, text in second.items():
        (root / "second-analyst" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return root


def test_category_and_severity_agreement_is_an_accuracy_per_field(bench: ModuleType, tmp_path: Path) -> None:
    folder = labelled_set(
        tmp_path,
        **{
            "category-severity-1": "a1-breach: {category: attacks-breaches, severity: critical}\n",
            "category-severity-2": "a2-patch: {category: Vulnerabilities, severity: critical}\n"
            "a3-guide: {category: compliance}\n",
        },
    )
    scores = bench.label_agreement(folder, "")
    assert scores["category"].prf()[0] == pytest.approx(2 / 3)
    assert scores["category"].counts["tp"] + scores["category"].counts["fn"] == 3
    assert scores["severity"].prf()[0] == pytest.approx(1 / 2)  # a3 has no second severity: not compared
    assert scores["severity"].counts["tp"] + scores["severity"].counts["fn"] == 2


def test_agreement_lines_are_printed_and_skipped_cleanly(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench.print_agreement(labelled_set(tmp_path / "none"), "")
    assert capsys.readouterr().out == ""
    bench.print_agreement(
        labelled_set(
            tmp_path / "both",
            **{
                "techniques-1": "a1-breach: [t1566.001]\n",
                "category-severity-1": "a1-breach: {category: malware, severity: high}\n",
            },
        ),
        "a1",
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "techniques, a second analyst against the labels (1 articles with techniques): P 1.00 / R 0.50 / F1 0.6667",
        "category, a second analyst against the labels (1 articles): accuracy 0.0000",
        "severity, a second analyst against the labels (1 articles): accuracy 1.0000",
    ]
