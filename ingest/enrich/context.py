"""How an article presents a value: as attacker infrastructure, as a benign name, or neither.

Issue 7: "An IOC is a value the article presents as malicious or attacker-used", judged from the
section it is listed in and the words around it. A mention gets a ``Verdict``:

- strength 3: listed on a list-like line under an indicators heading;
- strength 2: a malicious cue next to it in its sentence ("C2 server at", "..., used for exfiltration");
- strength 1: a malicious cue elsewhere in its sentence;
- benign: a role cue right before or after it ("impersonating", "victim", "according to", "acme.com's").

Values written as an enumeration ("a.com, b.com and c.com") share the cue of the enumeration, and the
nearest cue wins over a farther one, so one sentence can hold a lookalike and the brand it imitates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.enrich.resources import context_cues
from ingest.enrich.scan import Candidate
from ingest.enrich.textprep import Line

_SEPARATOR = re.compile(r"^[\s,;/|()\[\]]*(?:(?:and|or|&|as well as|plus)[\s,;/|()\[\]]*)?$", re.IGNORECASE)
_LIST_WORDS = re.compile(r"[A-Za-z]{2,}")
_LEFT_REACH = 90
_BENIGN_REACH = 32
_RIGHT_REACH = 60
_CLAUSE_REACH = 40
# ", a C2 server" or "(used for exfiltration)": an apposition after a value describes that value.
_APPOSITION = re.compile(r"^\s*[,(\u2013\u2014-]\s*(?:a|an|the|which|that|used|hosting|serving|acting|another|one|"
                         r"both|all|likely|probably|now|then|later|previously)\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;:()\u2013\u2014]|\s-\s")
# "rather than blocking", "should not be blocked": a negated cue says the opposite.
_NEGATION = re.compile(r"\b(?:not|never|rather than|instead of|without|no need to|don't|do not|shouldn't)"
                       r"(?:\s+(?:be|itself|themselves|really|necessarily|inherently|considered))?\s+$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Verdict:
    """How one mention is presented: strength 0-3 of the malicious reading, or a benign role."""

    strength: int
    benign: bool = False
    section: str = "body"
    paragraph: bool = False  # a malicious cue somewhere in the paragraph


def sentence_of(line: Line, position: int) -> tuple[int, int]:
    for start, end in line.sentences():
        if start <= position < end or position == end:
            return start, end
    return 0, len(line.text)


def _group(candidates: list[Candidate], index: int, text: str) -> tuple[int, int]:
    """First and last index of the enumeration ``candidates[index]`` belongs to."""
    first = index
    while first > 0 and _SEPARATOR.match(text[candidates[first - 1].end:candidates[first].start]):
        first -= 1
    last = index
    while last + 1 < len(candidates) and _SEPARATOR.match(text[candidates[last].end:candidates[last + 1].start]):
        last += 1
    return first, last


def _nearest_left(window: str) -> str | None:
    """``malicious`` or ``benign`` for the cue ending nearest the end of ``window``."""
    best: tuple[int, str] | None = None
    for match in context_cues("malicious").finditer(window):
        kind = "benign" if _NEGATION.search(window[max(0, match.start() - 20):match.start()]) else "malicious"
        best = (match.end(), kind) if best is None or match.end() >= best[0] else best
    tail_start = max(0, len(window) - _BENIGN_REACH)
    for match in context_cues("benign_before").finditer(window, tail_start):
        if best is None or match.end() >= best[0]:
            best = (match.end(), "benign")
    return best[1] if best else None


def list_like(line: Line, candidates: list[Candidate]) -> bool:
    """A line that is mostly indicators: a list item, a table row, a label and a value."""
    text = line.text
    for candidate in candidates:
        text = text.replace(candidate.value, " ")
    return len(_LIST_WORDS.findall(text)) <= 8


def judge(line: Line, candidates: list[Candidate], index: int) -> Verdict:
    """The verdict on ``candidates[index]`` (all candidates of ``line``, in order)."""
    text = line.text
    candidate = candidates[index]
    sentence = sentence_of(line, candidate.start)
    first, last = _group(candidates, index, text)
    left_edge = max(sentence[0], candidates[first - 1].end if first > 0 else 0, candidates[first].start - _LEFT_REACH)
    right_edge = min(sentence[1], candidates[last + 1].start if last + 1 < len(candidates) else len(text),
                     candidates[last].end + _RIGHT_REACH)
    after = text[candidate.end:candidate.end + 40]
    if context_cues("benign_after").match(after) or context_cues("benign_after").match(after.lstrip(")]\"' ")):
        return Verdict(0, benign=True, section=line.section)
    left = _nearest_left(text[left_edge:candidates[first].start])
    if left == "benign":
        return Verdict(0, benign=True, section=line.section)
    if line.section == "ioc" and list_like(line, candidates):
        return Verdict(3, section="ioc")
    right = _right_cue(text[candidates[last].end:right_edge])
    if left == "malicious" or right:
        return Verdict(2, section=line.section)
    if _sentence_cue(text, sentence, candidates) or line.section == "ioc":
        return Verdict(1, section=line.section)
    return Verdict(0, section=line.section, paragraph=paragraph_cue(line, candidates))


def _right_cue(window: str) -> bool:
    """A malicious cue after a value, in its own clause or in an apposition that describes it."""
    apposition = _APPOSITION.match(window)
    if apposition:  # up to the end of the apposition: ", a C2 relay, ..." or "(used for exfiltration)"
        end = _CLAUSE_END.search(window, apposition.end())
        window = window[:end.start() if end else len(window)]
    else:
        end = _CLAUSE_END.search(window)
        window = window[:min(end.start() if end else len(window), _CLAUSE_REACH)]
    match = context_cues("malicious").search(window)
    return match is not None and not _NEGATION.search(window[max(0, match.start() - 20):match.start()])


def paragraph_cue(line: Line, candidates: list[Candidate]) -> bool:
    """A malicious cue anywhere in the line (paragraph), outside the candidates themselves."""
    return _sentence_cue(line.text, (0, len(line.text)), candidates)


def _sentence_cue(text: str, sentence: tuple[int, int], candidates: list[Candidate]) -> bool:
    clause = text[sentence[0]:sentence[1]]
    for other in candidates:
        if sentence[0] <= other.start < sentence[1]:
            offset = other.start - sentence[0]
            clause = clause[:offset] + " " * (other.end - other.start) + clause[offset + other.end - other.start:]
    return bool(context_cues("malicious").search(clause))
