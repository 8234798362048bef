"""How an article presents a value: as attacker infrastructure, as a benign name, or neither.

An IOC is a value the article presents as malicious or attacker-used, judged from the
section it is listed in and the words around it. A mention gets a ``Verdict``:

- strength 3: listed on a list-like line under an indicators heading;
- strength 2: a malicious cue next to it in its sentence ("C2 server at", "..., used for exfiltration"), or
  anywhere on its list-like line, which may also pair it with an actor or malware family ("APT33 : ip");
- strength 1: a malicious cue elsewhere in its sentence;
- benign: a role cue right before or after it ("impersonating", "victim", "according to", "acme.com's"),
  a list the article says is clean (``listshapes``: false positives, sinkholed, hosts to allow), or a row
  that says so ("(clean)", "authorised red-team server").

Values written as an enumeration ("a.com, b.com and c.com") share the cue of the enumeration, and the
nearest cue wins over a farther one, so one sentence can hold a lookalike and the brand it imitates.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from ingest.enrich.actors import names_actor_or_software
from ingest.enrich.listshapes import table_row
from ingest.enrich.resources import context_cues
from ingest.enrich.scan import Candidate
from ingest.enrich.textprep import Line

# Between two values of one enumeration: punctuation and connectives, an adverb included ("..., later also
# 45.147.228.19 and then office-cdn-sync.com"): the list goes on under the cue that opened it.
_SEPARATOR = re.compile(r"^[\s,;/|()\[\]]*(?:(?:and|or|&|as well as|plus|also|later|then|finally|too)"
                        r"[\s,;/|()\[\]]*)*$", re.IGNORECASE)
_LIST_WORDS = re.compile(r"[A-Za-z]{2,}")
_LEFT_REACH = 90
_BENIGN_REACH = 40
_TYPE_LABEL = re.compile(r"hash(?:es)?|sha-?(?:1|256|512)|md5", re.IGNORECASE)
_RIGHT_REACH = 60
_CLAUSE_REACH = 40
# ", a C2 server" or "(used for exfiltration)": an apposition after a value describes that value.
_APPOSITION = re.compile(r"^\s*[,(\u2013\u2014-]\s*(?:a|an|the|which|that|used|hosting|serving|acting|another|one|"
                         r"both|all|likely|probably|now|then|later|previously)\b", re.IGNORECASE)
_TAKEN_AWAY = re.compile(r"\b(?:sinkhol(?:ed|ing)|(?:resolves?|points?) to (?:a|the) sinkhole|was seized|were seized|"
                         r"(?:has|have|had) been (?:seized|taken down)|listed in error|(?:is|are) excluded from|"
                         r"false positive|authori[sz]ed (?:engagement|red[- ]team|penetration[- ]test|pentest))",
                         re.IGNORECASE)
_PRONOUN = re.compile(r"\s*(?:It|This domain|That domain|The domain|This address|That address)\b")
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
    """(start, end) of the sentence of ``line`` that holds ``position``."""
    spans = line.spans or tuple(line.sentences())
    index = max(0, bisect_right(spans, (position, len(line.text) + 1)) - 1)
    return spans[index]


def _groups(candidates: list[Candidate], text: str) -> list[tuple[int, int]]:
    """For each candidate, first and last index of the enumeration it belongs to (one linear pass)."""
    joined = [bool(_SEPARATOR.match(text[a.end:b.start])) for a, b in zip(candidates, candidates[1:], strict=False)]
    firsts, first = [], 0
    for index in range(len(candidates)):
        if index and not joined[index - 1]:
            first = index
        firsts.append(first)
    lasts, last = [0] * len(candidates), len(candidates) - 1
    for index in range(len(candidates) - 1, -1, -1):
        if index < len(candidates) - 1 and not joined[index]:
            last = index
        lasts[index] = last
    return list(zip(firsts, lasts, strict=True))


def _nearest_left(window: str) -> str | None:
    """``malicious`` or ``benign`` for the cue ending nearest the end of ``window``."""
    best: tuple[int, str] | None = None
    for match in context_cues("malicious").finditer(window):
        if _TYPE_LABEL.fullmatch(match.group()):
            continue  # "legitimate signed binary, SHA-256 ...": the label names the value, it does not judge it
        kind = "benign" if _NEGATION.search(window[max(0, match.start() - 20):match.start()]) else "malicious"
        best = (match.end(), kind) if best is None or match.end() >= best[0] else best
    tail_start = max(0, len(window) - _BENIGN_REACH)
    for match in context_cues("benign_before").finditer(window, tail_start):
        if best is None or match.end() >= best[0]:
            # "The ransom note tells victims to write to ...": contact wording after an attacker cue
            # gives the attackers' address, not the publisher's.
            attackers = best is not None and context_cues("contact").match(match.group())
            best = (match.end(), "malicious" if attackers else "benign")
    return best[1] if best else None


class LineContext:
    """What every verdict on one line needs, computed once: sentences, enumerations, cues outside values."""

    def __init__(self, line: Line, candidates: list[Candidate]) -> None:
        self.line = line
        self.candidates = candidates
        self.groups = _groups(candidates, line.text)
        masked = list(line.text)
        for candidate in candidates:
            masked[candidate.start:candidate.end] = " " * (candidate.end - candidate.start)
        self.masked = "".join(masked)
        words = len(_LIST_WORDS.findall(self.masked))
        self.list_like = words <= 8
        # A value alone on its line (an address on an indented line of a list) is listed, not mentioned.
        self.bare = words == 0 and len(candidates) == 1
        self._row: bool | None = None
        self._sentence_cues: dict[tuple[int, int], bool] = {}
        self._taken_away: dict[tuple[int, int], tuple[int, bool]] = {}

    def sentence_cue(self, sentence: tuple[int, int]) -> bool:
        """A malicious cue in the sentence, outside the values themselves."""
        if sentence not in self._sentence_cues:
            clause = self.masked[sentence[0]:sentence[1]]
            self._sentence_cues[sentence] = bool(context_cues("malicious").search(clause))
        return self._sentence_cues[sentence]

    def taken_away(self, sentence: tuple[int, int], first: int, last: int) -> bool:
        """The sentence of a lone value (or its next one, "It was sinkholed in June") says defenders took
        it away or that it was listed in error (bench/LABELLING.md: sinkholed values, false positives)."""
        if sentence not in self._taken_away:  # once per sentence: a dump line holds thousands of values
            self._taken_away[sentence] = (sum(sentence[0] <= c.start < sentence[1] for c in self.candidates),
                                          self._tells_taken_away(sentence))
        values, told = self._taken_away[sentence]
        return told and values == last - first + 1  # other values in the sentence: the words may be theirs

    def _tells_taken_away(self, sentence: tuple[int, int]) -> bool:
        spans = self.line.spans or tuple(self.line.sentences())
        following = [span for span in spans if span[0] >= sentence[1]][:1]
        told = self.masked[sentence[0]:sentence[1]] + "".join(
            self.masked[start:end] for start, end in following if _PRONOUN.match(self.masked, start))
        return bool(_TAKEN_AWAY.search(told))

    def row_not_ioc(self) -> bool:
        """A list-like line, or a line of a list, whose words take its values out ("legitimate signed loader
        (clean)", "ip:port (excluded from blocklists: authorised red-team server)")."""
        return (self.list_like or table_row(self.line.text)) and bool(context_cues("row_not_ioc").search(self.masked))

    def row_cue(self) -> bool:
        """A list-like line whose words give its values a role in the attack: a malicious cue or a row role
        anywhere on it ("Scanner -> ip", "ip;date;session replay"), or an actor or malware family as its
        label ("APT33 : ip domain", "AsyncRAT | ip:port"). Such a line presents its values as malicious
        whatever heading it has or lacks."""
        if self._row is None:
            self._row = self.list_like and bool(self.candidates) and (
                _unnegated(context_cues("malicious"), self.masked) or _unnegated(context_cues("row_roles"), self.masked)
                or names_actor_or_software(self.masked))
        return self._row

    def paragraph_cue(self) -> bool:
        """A malicious cue anywhere in the line (paragraph), outside the values themselves."""
        return self.sentence_cue((0, len(self.masked)))

    def judge(self, index: int) -> Verdict:
        """The verdict on ``candidates[index]``."""
        line, candidates, text = self.line, self.candidates, self.line.text
        candidate = candidates[index]
        sentence = sentence_of(line, candidate.start)
        first, last = self.groups[index]
        left_edge = max(sentence[0], candidates[first - 1].end if first > 0 else 0,
                        candidates[first].start - _LEFT_REACH)
        right_edge = min(sentence[1], candidates[last + 1].start if last + 1 < len(candidates) else len(text),
                         candidates[last].end + _RIGHT_REACH)
        after = text[candidates[last].end:candidates[last].end + 40]  # an enumeration shares what follows it
        if context_cues("benign_after").match(after) or context_cues("benign_after").match(after.lstrip(")]\"' ")):
            return Verdict(0, benign=True, section=line.section)
        left = _nearest_left(text[left_edge:candidates[first].start])
        if left == "benign" or self.taken_away(sentence, first, last) or self.row_not_ioc():
            return Verdict(0, benign=True, section=line.section)
        if line.section == "benign" and self.list_like:
            return Verdict(0, benign=True, section="benign")  # a list the article says is clean
        if line.section == "ioc" and self.list_like:
            return Verdict(3, section="ioc")
        if left == "malicious" or _right_cue(text[candidates[last].end:right_edge]) or self.row_cue():
            return Verdict(2, section=line.section)
        if self.sentence_cue(sentence) or line.section == "ioc" or self.bare:
            return Verdict(1, section=line.section)
        return Verdict(0, section=line.section, paragraph=self.paragraph_cue())


def _unnegated(cues: re.Pattern[str], text: str) -> bool:
    """A cue in ``text`` that no negation right before it turns around ("not C2")."""
    return any(not _NEGATION.search(text[max(0, match.start() - 20):match.start()]) for match in cues.finditer(text))


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
