"""Deterministic classifiers: category, content type, industries, tech tags and severity with reasons.

Weighted cue rules from ``ingest/data/taxonomy.yaml`` (no network), plus what the extractors found: CVE
ids point to a vulnerability story, named actors and ATT&CK techniques to threat intel. Category and
severity also weigh how the title and lead read to a classifier trained on labelled leads
(:mod:`leads`): the rules alone held poorly on articles they were not written against.
Scores are sums of cue weights and one weighted probability, so every decision can be explained.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from ingest.enrich import leads
from ingest.enrich.actors import extract_actors
from ingest.enrich.resources import CueSet, yaml_data
from ingest.enrich.severity import Evidence, severity
from store.records import CATEGORIES, INDUSTRY_TAGS

_CVSS = re.compile(r"\bcvss(?:\s*v?[234](?:\.\d)?)?(?:\s+base)?(?:\s+score)?(?:\s+of)?\s*[:=]?\s*(\d{1,2}(?:\.\d)?)\b",
                   re.IGNORECASE)
_SECURITY_CONTENT = "security"
_MEANS_CATEGORIES = ("identity-access",)
_IR_GENRE_TITLE = re.compile(r"^\s*(?:incident report|case study|dfir|post-incident|after-action)\b|"
                             r"\blessons (?:learned )?from\b|"
                             r"\bhow we (?:caught|contained|found|responded|evicted|traced)\b|"
                             # "... forensics, lessons learned, recovery": a title telling the recovery, the
                             # review or the forensics of an incident names that genre too.
                             r"\b(?:rebuil(?:d|ds|t|ding)|restoring|recover(?:s|ing|y)|review (?:of|board)|"
                             r"(?:incident|breach) response|forensics?|evict(?:s|ed|ing)|post-?mortem|aftermath)\b",
                             re.IGNORECASE)
_VICTIM_EVENT_TITLE = re.compile(
    r"\b(?:halt(?:s|ed)?|disrupt(?:s|ed)?|crippl(?:es|ed)|divert(?:s|ed)?|forc(?:es|ed) .{0,40}(?:offline|onto paper|"
    r"to close)|knock(?:s|ed)? .{0,30}offline|tak(?:es|en?) .{0,30}offline|shut(?:s)? down|confirm(?:s|ed)? "
    r"(?:a |the )?(?:data )?(?:breach|theft|attack|cyberattack|intrusion|hack)|confirm(?:s|ed)? hackers|hit by|"
    r"says hackers|disclos(?:es|ed) (?:a )?(?:data )?breach)\b", re.IGNORECASE)
# "compliance: laws, regulation, fines, standards, policy" (LABELLING.md): a title telling a regulator's or
# government's act (a fine, sanctions, charges, a ban, an order, a new law or rule) is a regulatory story,
# whatever breach or malware it is about.
_REGULATORY_ACT_TITLE = re.compile(
    r"\b(?:sanctions? (?:imposed|on)|(?:treasury|government|regulators?|authority|sec|ministry|court) (?:sanctions|"
    r"fines|charges|bans|reprimands|orders|halts)|fined|(?:banned|bans?) (?:on )?(?:ransom|paying)|(?:new|proposed|"
    r"draft) (?:\w+ )?(?:law|rules?|regulation|legislation)|under (?:the )?new (?:law|rules?|proposals|regulation)|"
    r"emergency directive)\b", re.IGNORECASE)
_GENRE_WEIGHT = 14.0  # cross-validated: 8 / 10 / 12 / 14 / 16 swept (BENCHMARKS.md)
_REGULATORY_WEIGHT = 20.0  # cross-validated: 15-25 alike, 10 and 30 worse (BENCHMARKS.md)
# A named company (capitalised words) doing what vendors do, as the title's first words.
_VENDOR_NEWS_TITLE = re.compile(r"\s*[A-Z][\w.&'-]*(?: [A-Z][\w.&'-]*){0,2} (?:adds|extends|expands|rolls out|ships|"
                                r"debuts|launches|releases|unveils|introduces|brings|integrates|updates)\b")
_THREAT_TITLE = re.compile(r"ransom|malware|stealer|botnet|backdoor|loader|exploit|attack|hack|vulnerab|flaw|"
                           r"zero-day|zero-click|breach|leak|campaign|apt\d|spyware|wiper|trojan|encrypt|\brce\b|"
                           r"remote code|extortion|phish|intrusion|compromis|ddos|hijack|\bkev\b", re.IGNORECASE)
_NETWORK_ATTACK_TITLE = re.compile(r"\b(?:ddos|denial[- ]of[- ]service|dns hijack\w*|hijack\w* (?:dns|domains?|"
                                   r"nameservers?)|bgp|route (?:leak|hijack)\w*|nameserver)", re.IGNORECASE)
_ICS_TITLE = re.compile(r"\b(?:ics|ot|scada|plcs?|hmis?|rtus?|dcs|industrial|programmable logic|building "
                        r"(?:management|automation)|bms|safety instrumented)\b", re.IGNORECASE)
LEAD_WEIGHT = 40.0  # the lead classifier's probabilities against the cue scores: chosen on the tuning set
_NARRATIVE_STEPS = 3  # techniques from which an article tells an intrusion rather than an identity topic


@dataclass(frozen=True, slots=True)
class Findings:
    """What the extractors found, as evidence for the classifiers."""

    cves: int
    iocs: int
    actors: int
    techniques: int
    titled_actors: int = 0  # of the actors found in the article, those whose name the title writes


@dataclass(frozen=True, slots=True)
class Classification:
    """Category, its confidence, content type, tags and severity of one article."""

    category: str
    confidence: float
    content_type: str
    industry_tags: list[str]
    tech_tags: list[str]
    severity_score: float
    severity_reasons: list[str]


def _cue_set(groups: dict[str, Any]) -> CueSet:
    """One ``CueSet`` for label -> {cue: weight} (or label -> [cue, ...], weight 1)."""
    cues = []
    for label, entries in groups.items():
        items = entries.items() if isinstance(entries, dict) else ((cue, 1.0) for cue in entries)
        cues += [(cue, str(label), float(weight)) for cue, weight in items]
    return CueSet(cues)


@cache
def _rules() -> dict[str, Any]:
    data = yaml_data("taxonomy.yaml")
    unknown = set(data["categories"]) - set(CATEGORIES) | set(data["industries"]) - set(INDUSTRY_TAGS)
    if unknown:
        raise ValueError(f"taxonomy.yaml: unknown slugs {sorted(unknown)}")
    severity = {reason: [cue] for cue, (_, reason) in data["severity"]["cues"].items()}
    return {
        "categories": _cue_set(data["categories"]),
        "content_types": {kind: _cue_set({kind: cues}) for kind, cues in data["content_types"].items()},
        "industries": _cue_set(data["industries"]),
        "tech_tags": _cue_set(data["tech_tags"]),
        "severity": _cue_set(severity),
        "points": {reason: float(points) for points, reason in data["severity"]["cues"].values()},
        "data": data,
    }


def category_scores(title: str, body: str, findings: Findings,
                    lead: dict[str, float] | None = None) -> dict[str, float]:
    """Score of each category: cue weights, the evidence of the extractors and, when given, the lead
    classifier's probabilities (:mod:`leads`; without them, the rules alone)."""
    data = _rules()["data"]
    cues: CueSet = _rules()["categories"]
    scores = dict.fromkeys(CATEGORIES, 0.0)
    titled = cues.scores(title, cap=1_000_000, times=data["title_weight"])
    for slug, value in [*cues.scores(body, cap=data["max_hits"]).items(), *titled.items()]:
        scores[slug] += value
    if _IR_GENRE_TITLE.search(title):
        # "An incident-response write-up is incident-response" (LABELLING.md): a title that names the
        # genre decides over what the intrusion went through.
        scores["incident-response"] += _GENRE_WEIGHT
    elif _REGULATORY_ACT_TITLE.search(title):
        scores["compliance"] += _REGULATORY_WEIGHT
    elif _VICTIM_EVENT_TITLE.search(title) and not _NETWORK_ATTACK_TITLE.search(title):
        # "One victim's breach is attacks-breaches": a title telling what happened to an organisation
        # (halts production, confirms theft) is an event story, whatever malware did it; a DDoS that
        # knocks sites offline stays the network attack it is (the close call below).
        scores["attacks-breaches"] += _GENRE_WEIGHT
    # "A vulnerability in an ICS/OT product is iot-ot" (LABELLING.md's close calls): when the title is
    # about such systems, CVE ids are evidence for that category rather than for vulnerabilities.
    # "A state-actor campaign is threat-intel": an actor named in the title is the subject (as a genre is),
    # and the flaws and malware it uses are its means.
    # An actor the body names by its wording ("Mustang Panda", "a cluster we track as Cinder Kite") is named
    # in the title too when the title writes its name, with or without actor wording there.
    titled_actor = bool(findings.titled_actors or extract_actors(title))
    flaws = "iot-ot" if _ICS_TITLE.search(title) else "threat-intel" if titled_actor else "vulnerabilities"
    scores[flaws] += 2.0 * min(findings.cves, 3)
    scores["threat-intel"] += _GENRE_WEIGHT if titled_actor else 0.0
    # "A network attack (DDoS, DNS hijacking) is network-security": its actors and tools are its evidence.
    campaign = "network-security" if _NETWORK_ATTACK_TITLE.search(title) else "threat-intel"
    scores[campaign] += 3.0 * min(findings.actors, 2) + 0.5 * min(findings.techniques, 4)
    scores[campaign] += 1.0 if findings.iocs else 0.0
    # Passwords, MFA and accounts are how most intrusions go (LABELLING.md's close calls): they are an
    # article's subject only when its title says so, and weigh less again in an
    # article that tells an intrusion step by step.
    for slug in _MEANS_CATEGORIES:
        scores[slug] *= (1.0 if titled.get(slug) else 0.5) * (0.5 if findings.techniques >= _NARRATIVE_STEPS else 1.0)
    # How the title and lead read, by the classifier trained on labelled leads (ingest/enrich/leads.py).
    for slug, probability in (lead or {}).items():
        scores[slug] += LEAD_WEIGHT * probability
    return scores


def category_of(title: str, body: str, findings: Findings, lead: dict[str, float] | None = None) -> tuple[str, float]:
    """The best category and a confidence in [0, 1] (its share of the two best scores)."""
    scores = category_scores(title, body, findings, lead)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], CATEGORIES.index(item[0])))
    (best, top), (_, second) = ranked[0], ranked[1]
    if top <= 0:
        return "threat-intel", 0.0  # never with the lead classifier's share in the scores
    return best, round(top / (top + second), 2)


def content_type_of(title: str, body: str) -> str:
    """``educational`` or ``product`` when the title and lead say so; ``security`` otherwise."""
    lead = title + "\n" + body[:400]
    if _VENDOR_NEWS_TITLE.match(title) and not _THREAT_TITLE.search(title) and not extract_actors(title):
        return "product"  # "Harborline adds passkey enrolment to its platform": a vendor's own news
    for kind, cues in _rules()["content_types"].items():
        if cues.counts(title) or sum(cues.counts(lead).values()) >= 2:
            return str(kind)
    return _SECURITY_CONTENT


def tags_of(kind: str, text: str, *, minimum: int = 1) -> list[str]:
    """Industry or tech tags whose cues appear at least ``minimum`` times, strongest first."""
    counts = _rules()[kind].scores(text)
    return [tag for tag, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])) if count >= minimum]


def severity_of(text: str, category: str, content_type: str, findings: Findings,
                lead: dict[str, float] | None = None) -> tuple[float, list[str]]:
    """A 0.1-10 score in the spec's bucket of the rubric level, and the reasons (``severity``)."""
    return severity(evidence_of(text, category, content_type, findings, lead))


def evidence_of(text: str, category: str, content_type: str, findings: Findings,
                lead: dict[str, float] | None = None) -> Evidence:
    """What the severity rules and their weighing read of one article."""
    return Evidence(text, category, content_type == _SECURITY_CONTENT, findings.cves, findings.iocs,
                    findings.actors, findings.techniques, lead or {})


def classify(title: str, body: str, findings: Findings) -> Classification:
    """Every classification of one article."""
    read = leads.probabilities(title, body)
    category, confidence = category_of(title, body, findings, read["category"])
    content_type = content_type_of(title, body)
    text = title + "\n" + body
    # A sector named in the title, or twice in the body, is one the article is about.
    industries = tags_of("industries", f"{title}\n{title}\n{body}", minimum=2)[:3] or ["unclassified"]
    tech = tags_of("tech_tags", text, minimum=1)[:6]
    score, reasons = severity_of(text, category, content_type, findings, read["severity"])
    return Classification(category, confidence, content_type, industries, tech, score, reasons)
