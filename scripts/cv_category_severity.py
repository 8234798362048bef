"""Cross-validated category and severity accuracy on the labelled data the rules may be read against.

The figures `scripts/bench_enrich.py` prints for the tuning set are memory: the cue rules were written
against those articles, and the lead classifier learns their titles and leads. This script scores the
whole decision as ``enrich()`` makes it (cue rules, lead classifier, severity weighing, the extractors'
findings as evidence) on every labelled article it may use (the tuning set `bench/enrich_eval/` with its
calibration batches c1-c5, the list-shape set `bench/enrich_lists/`, and the 600 labelled leads of
`ingest/enrich/leads/part-*.yaml`, each lead read as a short article), split by article into folds,
stratified by group: for each fold the lead classifier is refitted on the other folds' leads and
articles, and the severity weighing on the other folds' out-of-fold readings (stacking). It prints each
group's accuracy for the combined decision, the rules alone and the classifier alone. The cue rules
were written against the tuning articles, not the leads (three rule classes excepted: destructive and
physical wording, and defenders' news, read on leads and calibration articles), so the leads' rows are
the nearest to an honest figure for the rules; on the tuning articles the rules' figure is memory, the
classifier's and the weighing's are not. The held-out set is never read.

``--write`` writes what ships: ``ingest/enrich/leads/articles.yaml`` (the articles' titles and leads
with their labels) and ``ingest/data/severity_weighing.yaml`` (the weighing fitted on every out-of-fold
reading).

    PYTHONPATH=$PWD .venv/bin/python scripts/cv_category_severity.py [--folds 5] [--confusion] [--write]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from unittest.mock import patch

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

from bench_enrich import load_articles, load_labels  # noqa: E402

from ingest.enrich import classify, leads, pipeline, severity  # noqa: E402
from ingest.enrich.classify import Findings  # noqa: E402

ARTICLE_LEADS = leads.LEADS / "articles.yaml"
WEIGHING = ROOT / "ingest" / "data" / "severity_weighing.yaml"
ARTICLE_WEIGHT = 6.0  # chosen by this cross-validation (4, 6, 10; C 0.3, 1, 3): BENCHMARKS.md
WEIGHING_C = 1.0
OPEN_SETS = {"tuning": ROOT / "bench" / "enrich_eval", "lists": ROOT / "bench" / "enrich_lists"}
LEVELS = ("critical", "high", "medium", "low")
READERS = ("combined", "rules", "classifier")


@dataclass(frozen=True, slots=True)
class Doc:
    """One labelled article as ``classify`` sees it inside ``enrich()``."""

    key: str
    group: str
    title: str
    body: str
    findings: Findings
    category: str
    severity: str


def _group(set_name: str, stem: str) -> str:
    if set_name == "tuning":
        prefix = stem.split("-", 1)[0]
        return prefix if prefix in {"c1", "c2", "c3", "c4", "c5"} else "older"
    return set_name


def _classify_inputs(title: str, text: str) -> tuple[str, str, Findings]:
    """The (title, body, findings) that ``enrich()`` hands to ``classify`` for this article."""
    seen: list[tuple[str, str, Findings]] = []

    def record(title: str, body: str, findings: Findings) -> classify.Classification:
        seen.append((title, body, findings))
        return pipeline.UNCLASSIFIED

    with patch.object(pipeline, "classify", record):
        pipeline.enrich(title, text)
    return seen[0]


def load_docs() -> list[Doc]:
    """Every labelled article of the open sets and every labelled lead, with its classify inputs."""
    docs = []
    for set_name, folder in OPEN_SETS.items():
        labels = load_labels(folder)
        for stem, title, text in load_articles(folder):
            title, body, findings = _classify_inputs(title, text)
            label = labels[stem]
            docs.append(
                Doc(
                    f"{set_name}/{stem}",
                    _group(set_name, stem),
                    title,
                    body,
                    findings,
                    str(label["category"]),
                    str(label["severity"]),
                )
            )
    for path in sorted(leads.LEADS.glob("part-*.yaml")):
        for index, item in enumerate(yaml.safe_load(path.read_text(encoding="utf-8")) or []):
            title, body, findings = _classify_inputs(str(item["title"]), str(item["lead"]))
            docs.append(
                Doc(
                    f"leads/{path.stem}/{index}",
                    f"leads-{path.stem[-1]}",
                    title,
                    body,
                    findings,
                    str(item["category"]),
                    str(item["severity"]),
                )
            )
    return docs


def folds(docs: list[Doc], count: int) -> dict[str, int]:
    """Article -> fold, stratified by group, fixed by a hash of the article's key (by article, never by part)."""
    fold: dict[str, int] = {}
    by_group: dict[str, list[Doc]] = defaultdict(list)
    for doc in docs:
        by_group[doc.group].append(doc)
    for members in by_group.values():
        ordered = sorted(members, key=lambda doc: hashlib.sha256(doc.key.encode()).hexdigest())
        fold.update({doc.key: index % count for index, doc in enumerate(ordered)})
    return fold


def training_examples(docs: list[Doc]) -> tuple[list[str], dict[str, list[str]]]:
    """What the lead classifier is fitted on: the title and lead of every labelled lead and article given."""
    texts = [leads.lead_text(doc.title, doc.body) for doc in docs]
    return texts, {name: [getattr(doc, name) for doc in docs] for name in leads.FIELDS}


@contextmanager
def fitted(model: Any, weights: severity.Weighing | None = None) -> Iterator[None]:
    """The lead model (and the severity weighing) of one fold in place of the shipped ones."""
    with patch.object(leads, "model", lambda: model):
        if weights is None:
            yield
            return
        with patch.object(severity, "weighing", lambda: weights):
            yield


def weighing_features(doc: Doc) -> list[float]:
    """What the severity weighing reads of one article, as ``classify`` builds it (lead model in place)."""
    read = leads.probabilities(doc.title, doc.body)
    category, _ = classify.category_of(doc.title, doc.body, doc.findings, read["category"])
    content_type = classify.content_type_of(doc.title, doc.body)
    evidence = classify.evidence_of(f"{doc.title}\n{doc.body}", category, content_type, doc.findings, read["severity"])
    return severity.weighing_features(severity.rules_level(evidence), evidence)


def fit_weighing(docs: list[Doc], features: dict[str, list[float]]) -> severity.Weighing:
    """A multinomial logistic regression from the weighing's features to the labelled level; an article
    counts ``ARTICLE_WEIGHT`` times a lead (a lead shows no body: no indicators, actors or techniques)."""
    from sklearn.linear_model import LogisticRegression

    weights = [1.0 if doc.group.startswith("leads-") else ARTICLE_WEIGHT for doc in docs]
    fit = LogisticRegression(C=WEIGHING_C, max_iter=5000)
    fit.fit([features[doc.key] for doc in docs], [doc.severity for doc in docs], sample_weight=weights)
    rows = tuple(tuple(round(float(w), 4) for w in row) for row in fit.coef_)
    return severity.Weighing(tuple(map(str, fit.classes_)), rows, tuple(round(float(b), 4) for b in fit.intercept_))


def readings(doc: Doc) -> dict[str, tuple[str, str]]:
    """Reader -> (category, severity level) for one article, with the lead model in place."""
    read = leads.probabilities(doc.title, doc.body)
    combined = classify.classify(doc.title, doc.body, doc.findings)
    with patch.object(leads, "probabilities", lambda title, body: {name: {} for name in leads.FIELDS}):
        rules = classify.classify(doc.title, doc.body, doc.findings)
    best: Callable[[dict[str, float]], str] = lambda scores: max(scores, key=scores.__getitem__)  # noqa: E731
    return {
        "combined": (combined.category, _level(combined)),
        "rules": (rules.category, _level(rules)),
        "classifier": (best(read["category"]), best(read["severity"])),
    }


def _level(result: classify.Classification) -> str:
    return result.severity_reasons[0].removeprefix("rubric level: ")


@dataclass(slots=True)
class CrossValidation:
    """Each article's readings by models that never saw it, and every article's out-of-fold features."""

    readings: dict[str, dict[str, tuple[str, str]]]
    features: dict[str, list[float]]


def cross_validate(docs: list[Doc], count: int) -> CrossValidation:
    """Lead models fitted per fold; then the weighing per fold, fitted on the other folds' out-of-fold
    features (stacking), and every article read by both as ``enrich()`` reads it."""
    fold = folds(docs, count)
    models, features = [], {}
    for index in range(count):
        models.append(leads.fit(*training_examples([doc for doc in docs if fold[doc.key] != index])))
        with fitted(models[index]):
            features.update({doc.key: weighing_features(doc) for doc in docs if fold[doc.key] == index})
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for index in range(count):
        weights = fit_weighing([doc for doc in docs if fold[doc.key] != index], features)
        with fitted(models[index], weights):
            out.update({doc.key: readings(doc) for doc in docs if fold[doc.key] == index})
    return CrossValidation(out, features)


def write_shipped(docs: list[Doc], features: dict[str, list[float]]) -> None:
    """The articles' titles and leads beside the labelled leads, and the weighing fitted on every article."""
    articles = [doc for doc in docs if not doc.group.startswith("leads-")]
    items = [
        {
            "title": d.title,
            "lead": " ".join(d.body[: leads.LEAD_CHARS].split()),
            "category": d.category,
            "severity": d.severity,
        }
        for d in articles
    ]
    header = "# Titles and leads of the tuning and list-shape articles (bench/enrich_eval, bench/enrich_lists) with\n"
    header += "# their labels, written by scripts/cv_category_severity.py --write; never the held-out set.\n"
    ARTICLE_LEADS.write_text(header + yaml.safe_dump(items, allow_unicode=True, sort_keys=False, width=1000))
    weights = fit_weighing(docs, features)
    data = {
        "levels": list(weights.levels),
        "weights": [list(row) for row in weights.weights],
        "intercepts": list(weights.intercepts),
    }
    header = "# The severity weighing (ingest/enrich/severity.py: weighing_features -> level), fitted by\n"
    header += f"# scripts/cv_category_severity.py --write on out-of-fold readings of {len(docs)} labelled leads and\n"
    header += f"# articles (C={WEIGHING_C}, an article weighing {ARTICLE_WEIGHT} leads). Features: the lead's\n"
    header += "# log-probability of critical, high, medium, low; the rules' level (same order); CVE ids, indicators,\n"
    header += "# actors, techniques (each up to three, /3); security content.\n"
    WEIGHING.write_text(header + yaml.safe_dump(data, sort_keys=False, width=1000, default_flow_style=None))


GROUP_ROWS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("leads", lambda g: g.startswith("leads-")),
    ("calibration articles c1-c5", lambda g: g in {"c1", "c2", "c3", "c4", "c5"}),
    ("older tuning articles", lambda g: g == "older"),
    ("list-shape articles", lambda g: g == "lists"),
    ("all articles (tuning + lists)", lambda g: not g.startswith("leads-")),
    ("everything", lambda g: True),
)


def print_table(docs: list[Doc], read: dict[str, dict[str, tuple[str, str]]]) -> None:
    print("| group | n | category: combined / rules / classifier | severity: combined / rules / classifier |")
    print("|---|---|---|---|")
    each: list[tuple[str, Callable[[str], bool]]] = [
        (g, partial(str.__eq__, g)) for g in sorted({d.group for d in docs})
    ]
    for name, wanted in (*GROUP_ROWS, *each):
        chosen = [doc for doc in docs if wanted(doc.group)]
        cells = []
        for field, position in (("category", 0), ("severity", 1)):
            cells.append(
                " / ".join(
                    f"{sum(read[d.key][r][position] == getattr(d, field) for d in chosen) / len(chosen):.3f}"
                    for r in READERS
                )
            )
        print(f"| {name} | {len(chosen)} | {cells[0]} | {cells[1]} |")


def print_confusion(docs: list[Doc], read: dict[str, dict[str, tuple[str, str]]], reader: str) -> None:
    halves = (("leads", lambda g: g.startswith("leads-")), ("articles", lambda g: not g.startswith("leads-")))
    for title, wanted in halves:
        pairs = Counter((d.severity, read[d.key][reader][1]) for d in docs if wanted(d.group))
        print(f"\nseverity, {reader}, {title}: rows = label, columns = read")
        print("| label \\ read | " + " | ".join(LEVELS) + " |")
        for level in LEVELS:
            print(f"| {level} | " + " | ".join(str(pairs[(level, other)]) for other in LEVELS) + " |")
        wrong = Counter(
            (d.category, read[d.key][reader][0])
            for d in docs
            if wanted(d.group) and read[d.key][reader][0] != d.category
        )
        print(
            f"category, {reader}, {title}, most frequent confusions (label -> read): "
            + ", ".join(f"{a} -> {b} ({n})" for (a, b), n in wrong.most_common(12))
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--confusion", action="store_true", help="confusion matrices by level and category")
    parser.add_argument("--write", action="store_true", help=f"write {ARTICLE_LEADS.name} and {WEIGHING.name}")
    args = parser.parse_args()
    docs = load_docs()
    result = cross_validate(docs, args.folds)
    read = result.readings
    if args.write:
        write_shipped(docs, result.features)
    print(f"{args.folds}-fold cross-validation by article; {len(docs)} labelled articles and leads")
    print_table(docs, read)
    if args.confusion:
        for reader in READERS:
            print_confusion(docs, read, reader)
    print("\n    command: PYTHONPATH=$PWD .venv/bin/python scripts/cv_category_severity.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
