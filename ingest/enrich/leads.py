"""Category and severity as an article's title and lead read, by classifiers trained on labelled leads.

The cue rules of :mod:`classify` and :mod:`severity` know only the wording someone wrote down, and were
written against the tuning set: on articles they had never seen they held far less well.
These classifiers learn from ``leads/part-*.yaml``: headlines and opening paragraphs labelled with
one category and one severity from ``bench/LABELLING.md`` alone, by people who had seen neither the
rules nor the evaluation sets; and from ``leads/articles.yaml``: the titles and leads of the tuning and
list-shape articles with their labels (never the held-out set). A title and lead is what tells a reader
what an article is about and how bad the threat is; the rules then add what the body shows (CVE ids,
actors, indicators, signals).

Multinomial logistic regression over TF-IDF words and word pairs (:mod:`textmodel`), so its outputs are
probabilities: they add to the category rules' scores with one weight, and enter the severity weighing
(:mod:`severity`), both chosen by cross-validation (``scripts/cv_category_severity.py``).
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ingest.enrich import textmodel
from ingest.enrich.textmodel import VECTORIZER, Model

logger = logging.getLogger(__name__)

LEADS = Path(__file__).with_name("leads")
FIELDS = ("category", "severity")
LEAD_CHARS = 700  # about the opening paragraph the examples are: 40-120 words
# C chosen by 5-fold cross-validation by article (2, 4, 8, 16: scripts/cv_category_severity.py, BENCHMARKS.md)
_SETTINGS: dict[str, Any] = {"C": 8.0, "min_df": 2, "title_repeat": 2, "lead_chars": LEAD_CHARS, "version": 1}


def lead_text(title: str, body: str) -> str:
    """What the classifiers read: the title (counted twice: it states the subject) and the lead."""
    lead = " ".join(body[:LEAD_CHARS].split())
    return " ".join([title.strip()] * _SETTINGS["title_repeat"] + [lead])


def examples() -> tuple[list[str], dict[str, list[str]]]:
    """(texts, field -> labels) of every labelled lead shipped with the package."""
    texts: list[str] = []
    labels: dict[str, list[str]] = {name: [] for name in FIELDS}
    for path in sorted(LEADS.glob("*.yaml")):
        for item in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            texts.append(lead_text(str(item["title"]), str(item["lead"])))
            for name in FIELDS:
                labels[name].append(str(item[name]))
    return texts, labels


def train() -> Model:
    """One vectorizer and one classifier per field, kept as one model whose classes are ``field:label``
    (deterministic: same data, same model), so that an article's lead is vectorized once."""
    return fit(*examples())


def fit(texts: list[str], labels: dict[str, list[str]]) -> Model:
    """The model of :func:`train` fitted on any labelled texts (cross-validation refits it per fold)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = TfidfVectorizer(min_df=_SETTINGS["min_df"], **VECTORIZER)
    matrix = vectorizer.fit_transform(texts)
    fits = [LogisticRegression(C=_SETTINGS["C"], max_iter=2000).fit(matrix, labels[name]) for name in FIELDS]
    classes = [f"{name}:{label}" for name, fitted in zip(FIELDS, fits, strict=True) for label in fitted.classes_]
    return Model.fitted(vectorizer, np.vstack([fitted.coef_ for fitted in fits]),
                        np.concatenate([fitted.intercept_ for fitted in fits]), classes)


def fingerprint() -> str:
    return textmodel.fingerprint(_SETTINGS, LEADS.glob("*.yaml"), [])


@cache
def model() -> Model:
    """The classifiers, kept under their fingerprint (trained on first use, or in the image's build)."""
    return textmodel.kept(textmodel.cache_dir() / f"leads-{fingerprint()}.npz", train)


def probabilities(title: str, body: str) -> dict[str, dict[str, float]]:
    """Field -> each label with its probability for this title and lead (a softmax per field)."""
    classifier = model()
    scores = classifier.scores([lead_text(title, body)])[0]
    read: dict[str, dict[str, float]] = {}
    for name in FIELDS:
        columns = [i for i, label in enumerate(classifier.classes) if label.startswith(f"{name}:")]
        exp = np.exp(scores[columns] - scores[columns].max())
        read[name] = {classifier.classes[i].split(":", 1)[1]: float(v) for i, v in zip(columns, exp / exp.sum(),
                                                                                          strict=True)}
    return read


if __name__ == "__main__":  # ``python -m ingest.enrich.leads``: train now and keep (the image's build)
    logging.basicConfig(level=logging.INFO)
    logger.info("lead classifiers: %d labels, kept in %s", len(model().classes), textmodel.cache_dir())
