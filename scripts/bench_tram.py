"""scripts/bench tram: ATT&CK techniques on MITRE TRAM 2's 151 annotated reports, 5-fold by report.

TRAM 2 (``../shared/data/tram2``, Apache-2.0) marks in real published reports the spans that tell a
technique. The reports are dealt into five folds by report, never by sentence (a fixed seed). For
each fold the procedure classifier is trained on everything it is trained on in the product (ATT&CK's
examples, the report prose) and on the TRAM sentences, marked and unmarked, of the other four folds
only; then each report of the fold goes through the whole technique extractor (ids written, phrases,
the classifier) as ``enrich`` runs it. Micro precision / recall / F1 against the report's marked ids: exact ids, parent
techniques (T1055.012 counts as T1055 on both sides), and both limited to TRAM's vocabulary (the 77
ids its annotators could choose from: a technique outside it may be right and still unmarked). The
last line is the parent-level F1 against the issue's target.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tram_sentences import annotations, report_body  # noqa: E402  (scripts/, beside this file)

from ingest.enrich import procedures  # noqa: E402
from ingest.enrich.attack import extract_techniques  # noqa: E402
from ingest.enrich.textmodel import Model  # noqa: E402
from ingest.enrich.textprep import build_document, prose_sentences  # noqa: E402

SOURCE = ROOT.parent / "shared" / "data" / "tram2"
FOLDS, SEED, TARGET = 5, 20240917, 0.70
Report = tuple[str, str, set[str]]  # title, text, marked technique ids


def load_reports(source: Path) -> dict[str, Report]:
    """Report name -> (title, body, marked ids), with revoked ids as ATT&CK now names them."""
    reports = {}
    for path in sorted((source / "reports").glob("*.mjson")):
        report = json.loads(path.read_text(encoding="utf-8"))
        title = report["signal"].split("\n", 1)[0].removeprefix("title:").strip()
        marked = {procedures.revoked(technique_id) for technique_id, _, _ in annotations(report)}
        reports[path.stem] = (title, report_body(report["signal"]), marked)
    return reports


def folds(names: Iterable[str]) -> list[list[str]]:
    """The reports dealt into ``FOLDS`` folds after a seeded shuffle (the same folds every run)."""
    shuffled = sorted(names)
    random.Random(SEED).shuffle(shuffled)
    return [shuffled[index::FOLDS] for index in range(FOLDS)]


def predict(title: str, text: str) -> set[str]:
    """The techniques the product reports for one article (as ``ingest.enrich.pipeline.enrich`` finds them),
    revoked ids read as ATT&CK now names them, as the marked ids are."""
    document = build_document(title, text)
    return {procedures.revoked(record.id) for record in extract_techniques(document.text, prose_sentences(document))}


def parent(technique_id: str) -> str:
    return technique_id.split(".", 1)[0]


class Micro:
    """Micro-averaged counts over reports."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def add(self, expected: set[str], got: set[str]) -> None:
        self.counts.update(tp=len(expected & got), fp=len(got - expected), fn=len(expected - got))

    def line(self) -> str:
        tp, fp, fn = self.counts["tp"], self.counts["fp"], self.counts["fn"]
        precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
        return f"{precision:.3f} / {recall:.3f} / {self.f1():.4f}"

    def f1(self) -> float:
        tp, fp, fn = self.counts["tp"], self.counts["fp"], self.counts["fn"]
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def score(results: dict[str, tuple[set[str], set[str]]], vocabulary: set[str]) -> dict[str, Micro]:
    """The four measures over (marked, predicted) pairs of every report."""
    measures = {name: Micro() for name in ("exact", "parent", "exact, TRAM vocabulary", "parent, TRAM vocabulary")}
    parents = {parent(technique_id) for technique_id in vocabulary}
    for expected, got in results.values():
        measures["exact"].add(expected, got)
        measures["parent"].add({parent(i) for i in expected}, {parent(i) for i in got})
        measures["exact, TRAM vocabulary"].add(expected, got & vocabulary)
        measures["parent, TRAM vocabulary"].add({parent(i) for i in expected}, {parent(i) for i in got} & parents)
    return measures


def cross_validate(reports: dict[str, Report], without_tram: bool) -> dict[str, tuple[set[str], set[str]]]:
    """(marked, predicted) of every report, each predicted by the model of the folds it is not in."""
    results = {}
    if without_tram:
        use(procedures.train(set(reports)))
    for held in folds(reports):
        if not without_tram:
            use(procedures.train(set(held)))
        for name in held:
            title, text, marked = reports[name]
            results[name] = (marked, predict(title, text))
        print(f"fold of {len(held)} reports done", file=sys.stderr)
    return results


def use(model: Model) -> None:
    """Make the extractor's classifier the fold's model (the product's is built from every report)."""
    fitted: Callable[[], Model] = lambda: model  # noqa: E731
    procedures.model = fitted  # type: ignore[assignment]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SOURCE, help="TRAM 2's folder (reports/*.mjson)")
    parser.add_argument("--without-tram", action="store_true",
                        help="train on no TRAM sentence at all (the classifier as it was before TRAM)")
    args = parser.parse_args(argv)
    if not (args.source / "reports").is_dir():
        print(f"TRAM 2 is not at {args.source}: the TRAM bench is skipped")
        return
    reports = load_reports(args.source)
    vocabulary = set().union(*(marked for _, _, marked in reports.values()))
    results = cross_validate(reports, args.without_tram)
    marked = sum(len(expected) for expected, _ in results.values())
    print(f"TRAM 2, {len(reports)} reports, {marked} marked ids ({len(vocabulary)} distinct), "
          f"{FOLDS}-fold by report (seed {SEED}){' without TRAM training' if args.without_tram else ''}\n")
    print("| measure | P / R / F1 (micro over reports) |\n|---|---|")
    measures = score(results, vocabulary)
    for name, micro in measures.items():
        print(f"| {name} | {micro.line()} |")
    print(f"\ncommand: scripts/bench tram {' '.join(argv if argv is not None else sys.argv[1:])}".rstrip())
    print(f"ratio tram_parent_f1 = {measures['parent'].f1():.4f} (target >= {TARGET})")


if __name__ == "__main__":
    main()
