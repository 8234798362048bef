"""Extractive summaries: the lead as ``summary``, the best-scoring sentences as ``ai_summary``.

No model: sentences are scored by the frequency of their content words in the article (a classic
Luhn-style extractive summary), a bonus for the lead and for naming CVEs, actors or figures, and a
penalty for very short or very long sentences. Indicator lists and headings are never summary text.
"""

from __future__ import annotations

import math
import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_ENTITY = re.compile(r"\bCVE-\d{4}-\d+|\b\d[\d,.]*\s*(?:%|percent|million|billion|thousand)|\bT\d{4}\b", re.IGNORECASE)
_STOPWORDS = frozenset("""
the and for that with this from have has had was were are been being its their they them which who whom whose
what when where while than then into onto over under about after before between through during also such only
other some more most many much very can could would should will shall may might must not nor but yet our your
his her she him you all any each few both same own out off again further once here there why how just said says
one two new used using use like well even still
""".split())
SUMMARY_CHARS = 300
AI_SUMMARY_CHARS = 700
_MIN_WORDS, _MAX_WORDS = 6, 60


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "..."


def lead_summary(title: str, sentences: list[str]) -> str:
    """The first of the body's prose ``sentences``, up to about ``SUMMARY_CHARS`` characters (else the title)."""
    chosen: list[str] = []
    for sentence in sentences:
        if chosen and len(" ".join([*chosen, sentence])) > SUMMARY_CHARS:
            break
        chosen.append(sentence)
    return _clip(" ".join(chosen), SUMMARY_CHARS) if chosen else _clip(title, SUMMARY_CHARS)


def _sentence_score(sentence: str, index: int, weights: Counter[str], title_words: set[str]) -> float:
    words = [word.lower() for word in _WORD.findall(sentence)]
    content = [word for word in words if word not in _STOPWORDS]
    if not content:
        return 0.0
    score = float(sum(weights[word] for word in set(content))) / math.sqrt(len(set(content)))
    score += 0.5 * len(title_words.intersection(content))
    score += 1.0 * len(_ENTITY.findall(sentence))
    score += 1.5 / (1 + index)  # news leads carry the essentials
    if len(words) < _MIN_WORDS or len(words) > _MAX_WORDS:
        score *= 0.5
    return score


def extractive_summary(title: str, body: list[str], *, count: int = 3) -> str:
    """The ``count`` best of the prose sentences ``body``, in article order, up to about ``AI_SUMMARY_CHARS``."""
    if not body:
        return ""
    words = [word.lower() for sentence in body for word in _WORD.findall(sentence)]
    counts = Counter(word for word in words if word not in _STOPWORDS)
    top = max(counts.values(), default=1)
    weights = Counter({word: value / top for word, value in counts.items()})
    title_words = {word.lower() for word in _WORD.findall(title)} - _STOPWORDS
    ranked = sorted(range(len(body)), key=lambda i: (-_sentence_score(body[i], i, weights, title_words), i))
    chosen: list[int] = []
    for index in ranked:
        if len(chosen) == count:
            break
        if len(" ".join(body[i] for i in sorted([*chosen, index]))) <= AI_SUMMARY_CHARS or not chosen:
            chosen.append(index)
    return _clip(" ".join(body[i] for i in sorted(chosen)), AI_SUMMARY_CHARS)
