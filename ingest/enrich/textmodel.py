"""Small linear text classifiers kept as plain arrays, trained from data a pinned package or this package ships.

Both classifiers of the enrichment (ATT&CK techniques in prose, :mod:`ingest.enrich.procedures`; category
and severity from an article's title and lead, :mod:`ingest.enrich.leads`) are TF-IDF words and word
pairs under a linear model. No model file is in the repository and nothing is downloaded: a model is
trained from its data (seconds, deterministic), then kept in the cache directory (``CTIWIRE_MODEL_DIR``,
else ``$XDG_CACHE_HOME/ctiwire`` or ``~/.cache/ctiwire``) under a name that fingerprints the data, the
settings and the libraries' versions, so a change to any of them retrains.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

logger = logging.getLogger(__name__)

VECTORIZER: dict[str, Any] = {"ngram_range": (1, 2), "sublinear_tf": True, "stop_words": "english",
                              "dtype": np.float32}


class Model:
    """A trained linear classifier in plain arrays: vocabulary, idf, sparse weights, intercepts, classes."""

    def __init__(self, vocabulary: dict[str, int], idf: np.ndarray, weights: sp.csr_matrix,
                 intercepts: np.ndarray, classes: list[str]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vocabulary, self.idf, self.weights = vocabulary, idf, weights
        self.intercepts, self.classes = intercepts, classes
        self._vectorizer = TfidfVectorizer(vocabulary=vocabulary, **VECTORIZER)
        self._vectorizer.idf_ = idf
        self._columns = weights.T.tocsr()  # transposed once: a product with ``weights.T`` converts it every call

    @classmethod
    def fitted(cls, vectorizer: Any, coef: np.ndarray, intercepts: np.ndarray, classes: Iterable[Any],
               prune: float = 0.0) -> Model:
        """The arrays of a fitted scikit-learn vectorizer and linear model (weights below ``prune`` dropped)."""
        weights = np.where(np.abs(coef) >= prune, coef, 0).astype(np.float32)
        return cls({term: int(index) for term, index in vectorizer.vocabulary_.items()},
                   vectorizer.idf_.astype(np.float32), sp.csr_matrix(weights), intercepts.astype(np.float32),
                   [str(label) for label in classes])

    def scores(self, texts: list[str]) -> np.ndarray:
        """Decision scores, texts x classes."""
        features = self._vectorizer.transform(texts)
        dense: np.ndarray = np.asarray((features @ self._columns).todense())
        dense += self.intercepts
        return dense

    def save(self, path: Path) -> None:
        """Write the arrays (no pickle: loading runs no code) atomically, so readers see all or nothing."""
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp.npz")
        terms = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        np.savez_compressed(temporary, terms=np.array(terms), idf=self.idf, data=self.weights.data,
                            indices=self.weights.indices, indptr=self.weights.indptr,
                            shape=np.array(self.weights.shape), intercepts=self.intercepts,
                            classes=np.array(self.classes))
        temporary.replace(path)

    @classmethod
    def load(cls, path: Path) -> Model:
        with np.load(path, allow_pickle=False) as arrays:
            weights = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                                    shape=tuple(arrays["shape"]))
            vocabulary = {str(term): index for index, term in enumerate(arrays["terms"])}
            return cls(vocabulary, arrays["idf"], weights, arrays["intercepts"], [str(c) for c in arrays["classes"]])


def cache_dir() -> Path:
    """Where trained models are kept (``CTIWIRE_MODEL_DIR``, else the user's cache directory)."""
    explicit = os.environ.get("CTIWIRE_MODEL_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ctiwire"


def fingerprint(settings: dict[str, Any], files: Iterable[Path], packages: Iterable[str]) -> str:
    """Names one model: its settings, its training files and the versions of the packages that shape it."""
    digest = hashlib.sha256(repr(sorted(settings.items())).encode())
    for path in sorted(files, key=lambda path: path.name):  # where the checkout sits must not rename the model
        digest.update(path.name.encode() + path.read_bytes())
    for package in (*packages, "scikit-learn", "numpy"):
        digest.update(f"{package}={metadata.version(package)}".encode())
    return digest.hexdigest()[:16]


def kept(path: Path, train: Callable[[], Model]) -> Model:
    """The model at ``path`` when it is there and readable, else trained and kept there."""
    try:
        return Model.load(path)
    except (OSError, ValueError, KeyError):
        pass  # absent, unreadable or from another layout: train afresh
    trained = train()
    try:
        trained.save(path)
    except OSError as error:  # a read-only home still enriches; it just trains once per process
        logger.warning("could not keep the classifier %s in %s: %s", path.name, path.parent, error)
    return trained
