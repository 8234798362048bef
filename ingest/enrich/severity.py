"""Severity of the threat an article reports (the rubric of ``bench/LABELLING.md``), with its reasons.

Signals are cue families from ``ingest/data/severity.yaml``; the level is the first rule that holds:

- critical: zero-click exploitation, a destructive attack, an attack on critical infrastructure or a
  physical process, or a flaw exploited in the wild that gives pre-auth code execution (in one paragraph);
- high: a confirmed compromise, an active campaign by a named actor or at scale, a flaw exploited in
  the wild in a widely used product, a critical flaw in a widely used product;
- medium: limited or contained threats, commodity malware, exposure by misconfiguration, case studies,
  and any other article with a threat in it (CVE ids, indicators, actors);
- low: product, business, regulatory or opinion news and guides, with no live threat.

With the lead classifier's reading (:mod:`leads`), the level is weighed from the rules' level, that
reading and the extractors' counts by a small logistic regression (``ingest/data/severity_weighing.yaml``,
fitted by cross-validation: ``scripts/cv_category_severity.py``).

The score falls in the spec's bucket for the level (critical 9-10, high 7-8.9, medium 4-6.9, low
0.1-3.9) and rises within it with each further reason, so that sorting by score keeps meaning.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cache

from ingest.enrich.resources import yaml_data
from store.records import severity_range

_LOW_START = 1.0  # where a low score starts inside the spec's low bucket (0.1-3.9); each further reason adds a step
_STEP = {"critical": 0.3, "high": 0.4, "medium": 0.5, "low": 0.5}
_IMPACT = re.compile(r"\bransomware\b|\bencrypt(?:ed|ion)\b|\bexfiltrat\w*|\bstolen (?:data|files|records)\b|"
                     r"\bstole\b", re.IGNORECASE)
_RANSOMWARE = re.compile(r"\bransomware\b", re.IGNORECASE)
_LEAD = 600
# Defenders acting on people or helping victims: the threat's actors stopped, or its harm undone.
_DEFENDERS_TITLE = re.compile(r"\b(?:arrest(?:s|ed)?|indicted|sentenced|extradited|sanction(?:s|ed)|decryptors?)\b",
                              re.IGNORECASE)
_LIVE = re.compile(r"\b(?:keeps?|continues?|still|ongoing|new|resurfaces?|returns?|survives?|moves?|revived|harder|"
                   r"again|despite)\b", re.IGNORECASE)  # a threat the title says goes on after defenders acted
_WEIGHED = "level weighed from both readings and the findings"
_FLOOR = 1e-3  # a probability the lead classifier gives no level (keeps its logarithm finite)
_TOOL_CATEGORIES = frozenset({"malware", "application-security"})
_THREAT_CATEGORIES = frozenset({"attacks-breaches", "threat-intel", "malware", "vulnerabilities", "iot-ot",
                                "incident-response"})  # a write-up tells a real incident: a case study


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the severity rules read: the text, its category and content type, and extractor counts."""

    text: str
    category: str
    security_content: bool
    cves: int
    iocs: int
    actors: int
    techniques: int
    lead: dict[str, float] = field(default_factory=dict)  # level -> probability from the title and lead


@cache
def _signals() -> dict[str, tuple[re.Pattern[str], str]]:
    data = yaml_data("severity.yaml")["signals"]
    # Cues are lower case and read lower-cased text: a case-sensitive search runs about twice as fast.
    return {name: (re.compile(rf"(?<![\w-])(?:{entry['cue']})"), entry["reason"]) for name, entry in data.items()}


def _found(text: str) -> set[str]:
    lowered = text.lower()
    return {name for name, (pattern, _) in _signals().items() if pattern.search(lowered)}


def _signal_in(name: str, text: str) -> bool:
    """One signal in ``text`` (where only that one is asked, not all of them)."""
    return _signals()[name][0].search(text.lower()) is not None


def _exploited_preauth_rce(text: str) -> bool:
    """A flaw exploited in the wild that gives pre-auth code execution: the flaw's pre-auth code execution
    told in one paragraph (the exploitation may be told in another)."""
    return any(_signal_in("code_exec", paragraph) and _signal_in("preauth", paragraph)
               for paragraph in text.split("\n") if paragraph.strip())


def _level(signals: set[str], evidence: Evidence) -> str:
    quiet = evidence.category in yaml_data("severity.yaml")["quiet_categories"]
    case_study = evidence.category in yaml_data("severity.yaml")["case_study_categories"] and "compromise" in signals
    if _defenders_news(evidence.text):
        # "low: ... news ... with no live threat": an arrest, a sanction or a decryptor is what the title
        # reports, and it tells of no threat still going on.
        return "low"
    if not evidence.security_content or quiet:
        # A write-up's lessons make it read like a guide, but it tells a real intrusion: a case study is
        # medium (rubric).
        return "medium" if signals & {"exploited", "destructive"} or case_study else "low"
    # An attack on critical infrastructure is what the title and lead report, not a sector named in
    # passing further down ("like hospitals before them").
    harmed = bool(signals & {"compromise", "destructive", "exploited"})
    physical_attack = harmed and _signal_in("physical", evidence.text[:_LEAD])
    # "a flaw under active exploitation giving pre-auth remote code execution or mass data theft"
    mass_theft = {"exploited", "mass", "compromise"} <= signals
    # "ransomware that destroyed operations at scale": production halted across a company's plants.
    halted = "halted_at_scale" in signals and ("compromise" in signals or _RANSOMWARE.search(evidence.text) is not None)
    if "zero_click" in signals or "destructive" in signals or physical_attack or mass_theft or halted or (
            "exploited" in signals and _exploited_preauth_rce(evidence.text)):
        return "critical"
    return "high" if _high(signals, evidence) else "medium" if _threat(signals, evidence) else "low"


def _defenders_news(text: str) -> bool:
    """The title reports what defenders did to the threat's people or for its victims (arrest, sanction,
    decryptor), and no threat that goes on."""
    title = text.split("\n", 1)[0]
    return bool(_DEFENDERS_TITLE.search(title)) and not _LIVE.search(title)


def _high(signals: set[str], evidence: Evidence) -> bool:
    """A confirmed compromise, an active campaign at scale, an exploited or critical flaw in a widely used product."""
    widely = "widely_used" in signals
    in_the_wild = bool(signals & {"exploited", "zero_day"})
    if (in_the_wild and (widely or "mass" in signals)) or ("critical_vuln" in signals and widely):
        return True
    # Defenders' action counts when the lead reports it (a takedown story), not when a detail mentions it.
    held = bool(signals & {"contained"}) or _signal_in("defended", evidence.text[:400])
    if held:
        return False
    if evidence.category in yaml_data("severity.yaml")["case_study_categories"]:
        # A single case study is medium, unless what it tells had significant impact: systems encrypted
        # or data stolen (bench/LABELLING.md's "confirmed compromise ... with
        # significant impact").
        return "compromise" in signals and bool(_IMPACT.search(evidence.text))
    commodity = "commodity" in signals and not evidence.actors  # a named actor's campaign is not commodity
    if commodity and evidence.category in _TOOL_CATEGORIES and "mass" not in signals:
        # A stealer or miner "steals" and "exfiltrates" by design: that is its capability, not a
        # confirmed compromise of someone (rubric: commodity malware is medium).
        return False
    tracked = evidence.actors > 0 or "mass" in signals or evidence.iocs >= 3
    return ("compromise" in signals and evidence.category != "vulnerabilities") or (
        "campaign" in signals and tracked and not commodity)


def _threat(signals: set[str], evidence: Evidence) -> bool:
    threat_words = signals - {"widely_used", "mass", "defended"}
    return bool(evidence.category in _THREAT_CATEGORIES or evidence.cves or evidence.iocs or evidence.actors
                or threat_words)


LEVELS = ("critical", "high", "medium", "low")


def weighing_features(rules: str, evidence: Evidence) -> list[float]:
    """What the weighing reads: the lead's log-probability of each level, the rules' level, and what the
    body showed that a title and lead may not (CVE ids, indicators, actors, techniques, each counted up to
    three, and whether the article is security content rather than product news or a guide)."""
    lead = [math.log(evidence.lead.get(level, 0.0) + _FLOOR) for level in LEVELS]
    counts = (evidence.cves, evidence.iocs, evidence.actors, evidence.techniques)
    return [*lead, *(float(rules == level) for level in LEVELS), *(min(count, 3) / 3 for count in counts),
            float(evidence.security_content)]


@dataclass(frozen=True, slots=True)
class Weighing:
    """A multinomial logistic regression over :func:`weighing_features` (one row of weights per level)."""

    levels: tuple[str, ...]
    weights: tuple[tuple[float, ...], ...]
    intercepts: tuple[float, ...]

    def level(self, features: list[float]) -> str:
        scores = [sum(w * x for w, x in zip(row, features, strict=True)) + b
                  for row, b in zip(self.weights, self.intercepts, strict=True)]
        return self.levels[max(range(len(scores)), key=scores.__getitem__)]


@cache
def weighing() -> Weighing:
    """The weights fitted by cross-validation (``scripts/cv_category_severity.py --write``)."""
    data = yaml_data("severity_weighing.yaml")
    return Weighing(tuple(data["levels"]), tuple(tuple(map(float, row)) for row in data["weights"]),
                    tuple(map(float, data["intercepts"])))


def weighed(rules: str, evidence: Evidence) -> str:
    """The level the rules, the lead classifier and the findings read together, by weights fitted on
    labelled articles and leads (``ingest/data/severity_weighing.yaml``).

    Rules and classifier each held alone on articles neither had seen: the rules read the
    rubric's signals in the whole text but know only the wording written down; the classifier reads how
    an article presents its threat; the counts tell what the body showed beyond its lead (a named actor's
    campaign with indicators). Without the classifier's reading, the rules decide alone.
    """
    if not evidence.lead:
        return rules
    return weighing().level(weighing_features(rules, evidence))


def rules_level(evidence: Evidence) -> str:
    """The level the rubric's rules alone read."""
    return _level(_found(evidence.text), evidence)


def severity(evidence: Evidence) -> tuple[float, list[str]]:
    """(score in the level's bucket, reasons): the level's rule and the lead's reading, then every signal found."""
    signals = _found(evidence.text)
    rules = _level(signals, evidence)
    level = weighed(rules, evidence)
    reasons = [reason for name, (_, reason) in _signals().items() if name in signals]
    if evidence.iocs:
        reasons.append("indicators published")
    if not evidence.security_content:
        reasons.append("product, business or guide content")
    low, high = _bucket(level)
    score = min(high, low + _STEP[level] * max(0, len(reasons) - 1))
    return round(score, 1), [f"rubric level: {level}", *_readings(rules, evidence.lead), *reasons]


def _bucket(level: str) -> tuple[float, float]:
    """The scores of a level, one decimal: its bucket of the spec (store.records.SEVERITY_FLOORS), the
    last step below the next level's floor at the top, ``_LOW_START`` at the bottom of low."""
    lower, upper = severity_range(level)
    return (_LOW_START if lower is None else lower), (10.0 if upper is None else round(upper - 0.1, 1))


def _readings(rules: str, lead: dict[str, float]) -> list[str]:
    """What each reader said: the rules' level and the lead classifier's, with its probability."""
    if not lead:
        return []
    read = max(lead, key=lead.__getitem__)
    return [f"rules: {rules}", f"title and lead read as {read} ({lead[read]:.2f})", _WEIGHED]
