"""Domain records shared by every layer: articles, IOCs, users, API keys, sources.

Timestamps are timezone-aware UTC truncated to milliseconds, because MongoDB stores milliseconds and
both backends must hand back identical records (one behavioural suite runs on each).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from store import decay
from store.ioctypes import IOC_TYPES as IOC_TYPES
from store.stixids import CTIWIRE_NAMESPACE as CTIWIRE_NAMESPACE
from store.stixids import object_id

if TYPE_CHECKING:
    from config.sources import SourceConfig

CONFIDENCES: tuple[str, ...] = ("high", "medium", "low")
SOURCE_CATEGORIES: tuple[str, ...] = ("government", "commercial", "community")

CATEGORY_LABELS: dict[str, str] = {
    "attacks-breaches": "Attacks & Breaches",
    "vulnerabilities": "Vulnerabilities",
    "threat-intel": "Threat Intelligence",
    "malware": "Malware",
    "cloud-security": "Cloud Security",
    "endpoint-security": "Endpoint Security",
    "network-security": "Network Security",
    "identity-access": "Identity & Access",
    "application-security": "Application Security",
    "data-security": "Data Security",
    "security-operations": "Security Operations",
    "incident-response": "Incident Response",
    "compliance": "Compliance",
    "ai-ml-security": "AI/ML Security",
    "iot-ot": "IoT/OT",
}
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_LABELS)
# Spec, Article.category_legacy ("older category label"): the coarse taxonomy before the 15 slugs.
LEGACY_CATEGORIES: dict[str, str] = {
    "attacks-breaches": "Breaches", "vulnerabilities": "Vulnerabilities", "threat-intel": "Threat Intelligence",
    "malware": "Malware", "cloud-security": "Cloud", "endpoint-security": "Defense", "network-security": "Defense",
    "identity-access": "Defense", "application-security": "Vulnerabilities", "data-security": "Privacy",
    "security-operations": "Defense", "incident-response": "Breaches", "compliance": "Policy",
    "ai-ml-security": "Research", "iot-ot": "ICS",
}
INDUSTRY_TAGS: tuple[str, ...] = (
    "finance", "healthcare", "government", "technology", "manufacturing", "retail", "energy",
    "education", "telecom", "transportation", "defense", "water", "unclassified",
)
# Spec, "Severity buckets" (critical 9-10, high 7-8.9, medium 4-6.9, low 0.1-3.9), as half-open score
# ranges [floor, next floor): every score has exactly one label (an 8.95 is high, a 0 is low). The one
# definition: severity_label and both backends' filters (store/sqlite, store/mongo) derive from it.
SEVERITY_FLOORS: tuple[tuple[str, float], ...] = (("critical", 9.0), ("high", 7.0), ("medium", 4.0), ("low", 0.0))
SEVERITY_LABELS: tuple[str, ...] = tuple(label for label, _ in SEVERITY_FLOORS)




def severity_range(label: str) -> tuple[float | None, float | None]:
    """``[lower, upper)`` of ``label``'s scores; None where the range is open (critical has no upper bound,
    low no lower one: a score of 0 is low)."""
    index = SEVERITY_LABELS.index(label)
    lower = SEVERITY_FLOORS[index][1] if index < len(SEVERITY_FLOORS) - 1 else None
    upper = SEVERITY_FLOORS[index - 1][1] if index else None
    return lower, upper

def utcnow() -> datetime:
    """Now, in UTC, at millisecond precision."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def whole_second(value: datetime) -> datetime:
    """``value`` rounded up to the next whole second (unchanged when it is one)."""
    return value.replace(microsecond=0) + timedelta(seconds=1) if value.microsecond else value


def lookback_floor(lookback_days: int, now: datetime) -> datetime:
    """``now - lookback_days`` rounded up to the next whole second: never earlier than the lookback
    allows, and the same for every request within that second, so a page's count, a TAXII page's plan,
    or a cached export can be reused (spec, Limits: the tier lookback)."""
    return whole_second(now - timedelta(days=lookback_days))


def ms(value: datetime) -> datetime:
    """``value`` in UTC truncated to milliseconds (naive input is taken as UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    value = value.astimezone(UTC)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def iso(value: datetime) -> str:
    """RFC 3339 with milliseconds and ``Z``: the one wire form of every timestamp (naive means UTC).

    C-level ``isoformat`` (which truncates to milliseconds) rather than ``strftime``: exports and
    article pages format several timestamps per row, and this is about three times faster.
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    elif value.utcoffset():
        value = value.astimezone(UTC)
    return value.isoformat(timespec="milliseconds")[:-6] + "Z"


def parse_iso(text: str) -> datetime:
    """Parse an ISO 8601 timestamp (``Z`` or offset; a date alone means midnight UTC)."""
    value = datetime.fromisoformat(text.strip().replace("z", "Z").replace("Z", "+00:00"))
    return ms(value)


def parse_stored(text: str) -> datetime:
    """``parse_iso`` of a timestamp the store wrote with ``iso`` (UTC, milliseconds, ``Z``), about ten times
    faster: keyset positions are read for every row of a page. Any other form goes to ``parse_iso``."""
    if len(text) == 24 and text[-1] == "Z":
        return datetime.fromisoformat(text)
    return parse_iso(text)


def severity_label(score: float) -> str:
    """Bucket of a 0-10 score (spec, "Severity buckets"); 0 counts as low."""
    return next(label for label, floor in SEVERITY_FLOORS if score >= floor or label == "low")


# The shape of ``Article.list_form``, its CSV line (store.csvform) and ``Ioc.to_api``. Bump it with any
# change: SQLite keeps the
# encoded forms with each row and re-encodes every row when opened on an older version (store/sqlite/listforms.py).
LIST_FORM_VERSION = 10  # 2: IOC records keep their API form; 3: articles their CSV line; 4: IOC link counts;
# 5: IOC lifecycle (valid_until, revocation, sighting and false-positive counts); 6: and warninglists;
# 7: IOC severity and threat actors; 8: IOC score ladder places (store.decay.ladder_place); 9: IOC forms kept
# without their closing brace, ``modified`` last (store.sqlite.scores.stored_form); 10: ladder places in whole
# milliseconds (``iocs.score_place``)

# An IOC's articles, CVEs and techniques grow with the data (an ATT&CK technique is reported by a large share
# of all articles): the full lists live in the store's link relation (``IocStore.ioc_links``), and a record
# carries how many there are and the most recent few, so its size and every merge stay bounded.
RECENT_LINKS = 20
# Record list field -> link kind in the relation, and the field that counts it.
LINK_FIELDS: dict[str, tuple[str, str]] = {
    "article_ids": ("article", "article_count"), "cves": ("cve", "cve_count"),
    "techniques": ("technique", "technique_count"),
}


@dataclass(frozen=True, slots=True)
class MitreTechnique:
    """An ATT&CK technique on an article (spec: id, name, tactic, confidence)."""

    id: str
    name: str
    tactic: str = ""
    confidence: str = "high"


@dataclass(frozen=True, slots=True)
class ArticleIoc:
    """An indicator as mentioned by one article."""

    type: str
    value: str
    confidence: str = "medium"


_LIST_SCALARS: tuple[str, ...] = (
    "id", "title", "url", "canonical_url", "summary", "image_url", "source_name", "source_type", "source_tier",
    "category", "category_label", "category_legacy", "content_type", "severity_score", "severity_label",
    "categorized_by", "ai_classification", "ai_classification_confidence", "has_iocs", "ioc_count", "score",
    "upvotes", "downvotes", "comment_count", "vouch_count", "rank_score", "submission_type",
    "submitted_by_username", "audio_url", "audio_duration_seconds", "audio_voice", "is_archived",
)
_LIST_TIMES: tuple[str, ...] = ("published_at", "fetched_at", "modified_at", "created_at")


@dataclass(slots=True)
class Article:
    """One article; the list form of the spec is every field here but ``iocs``, ``tags`` and ``content``."""

    id: str
    title: str
    url: str
    canonical_url: str
    summary: str
    published_at: datetime
    fetched_at: datetime
    modified_at: datetime
    created_at: datetime
    source_name: str
    source_type: str = "rss"
    source_tier: int = 2
    category: str = "threat-intel"
    category_legacy: str = ""
    content_type: str = "security"
    severity_score: float = 5.0
    severity_reasons: list[str] = field(default_factory=list)
    ai_summary: str | None = None
    image_url: str | None = None
    categorized_by: str = "ai"
    categorized_at: datetime | None = None
    ai_classification: str = ""
    ai_classification_confidence: float = 0.0
    tech_tags: list[str] = field(default_factory=list)
    industry_tags: list[str] = field(default_factory=list)
    threat_actors: list[str] = field(default_factory=list)
    score: int = 0
    upvotes: int = 0
    downvotes: int = 0
    comment_count: int = 0
    vouch_count: int = 0
    rank_score: float = 0.0
    submission_type: str = "rss_auto"
    submitted_by_username: str | None = None
    audio_url: str | None = None
    audio_duration_seconds: float | None = None
    audio_voice: str | None = None
    mitre_techniques: list[MitreTechnique] = field(default_factory=list)
    cve_ids: list[str] = field(default_factory=list)
    is_archived: bool = False
    iocs: list[ArticleIoc] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    content: str = ""
    content_hash: str = ""

    @property
    def category_label(self) -> str:
        return CATEGORY_LABELS.get(self.category, self.category)

    @property
    def severity_label(self) -> str:
        return severity_label(self.severity_score)

    @property
    def has_iocs(self) -> bool:
        return bool(self.iocs)

    @property
    def ioc_count(self) -> int:
        return len(self.iocs)

    @property
    def has_ai_summary(self) -> bool:
        return bool(self.ai_summary)

    @property
    def has_audio(self) -> bool:
        return self.audio_url is not None

    def list_form(self) -> dict[str, Any]:
        """The spec's flat list form (every field top-level); ``ai_summary`` absent when there is none
        (spec: "may be absent for recent articles"). Stores may keep it pre-encoded (it depends on the
        record alone), so exports stream it without decoding the record."""
        row: dict[str, Any] = {name: getattr(self, name) for name in _LIST_SCALARS}
        row.update({name: iso(getattr(self, name)) for name in _LIST_TIMES})
        if self.ai_summary:
            row["ai_summary"] = self.ai_summary
        row["categorized_at"] = iso(self.categorized_at) if self.categorized_at else None
        for name in ("tech_tags", "industry_tags", "threat_actors", "cve_ids"):
            row[name] = list(getattr(self, name))
        row["mitre_techniques"] = [{"id": t.id, "name": t.name, "tactic": t.tactic, "confidence": t.confidence}
                                   for t in self.mitre_techniques]
        return row


@dataclass(slots=True)
class Ioc:
    """One indicator record per (type, value), aggregated over the articles that mention it.

    ``article_ids``, ``cves`` and ``techniques`` hold at most :data:`RECENT_LINKS` each: the most recently
    linked (listed in sorted order), the ``*_count`` fields how many there are in all. ``link_seen`` is when
    a listed one was last reported (ISO text), for the few whose time differs from ``modified``: merges
    keep the most recent few exactly, whatever order the reports come in.
    """

    type: str
    value: str
    confidence: str
    feed_name: str
    source_category: str
    first_seen: datetime
    last_seen: datetime
    modified: datetime
    sources: list[str] = field(default_factory=list)
    industries: list[str] = field(default_factory=list)
    article_ids: list[str] = field(default_factory=list)
    cves: list[str] = field(default_factory=list)
    techniques: list[str] = field(default_factory=list)
    threat_actors: list[str] = field(default_factory=list)
    article_count: int = 0
    cve_count: int = 0
    technique_count: int = 0
    link_seen: dict[str, str] = field(default_factory=dict)
    # The highest severity score (0-10) of the articles that reported the value: merged as a maximum, so
    # it follows the reporting (store.codec.merge_ioc), and recomputed when records are rebuilt.
    severity: float = 0.0
    # Lifecycle (store.decay): an operator's or the accounts' verdict; the score and valid_until follow from
    # the record (properties below).
    revoked: bool = False
    revoked_at: datetime | None = None
    revoked_reason: str = ""
    # Distinct accounts that reported the value seen / a false positive (POST /api/v1/sightings); records
    # stored before these existed read as 0.
    sightings: int = 0
    false_positives: int = 0
    # The warninglists (store.warninglists) the value is on, by name: known-benign values, left out of lists,
    # exports and TAXII unless asked for. Set at ingestion and by ``ctiwire iocs recheck``.
    warninglists: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # A count is never below what the record lists: a record built from its lists counts them.
        for name, (_, count) in LINK_FIELDS.items():
            if getattr(self, count) < len(getattr(self, name)):
                setattr(self, count, len(getattr(self, name)))

    @property
    def stix_id(self) -> str:
        """The id of the record's one STIX object: ``vulnerability--`` for a CVE, else ``indicator--``.
        The REST field, the STIX export and TAXII all name the record by it, and both stores index it."""
        return object_id(self.type, self.value)

    def date_added(self, now: datetime) -> datetime:
        """TAXII 2.1 date_added of the object's current version at ``now``: when that version came to be
        (section 5.4, one manifest entry per version), its effective ``modified`` (store.decay): the
        revocation, the expiry, or the last change that made a new version."""
        return decay.effective_modified(self, now)

    @property
    def valid_until(self) -> datetime:
        """When the score falls below the threshold (store.decay): stored and indexed by both stores."""
        return decay.valid_until(self)

    @property
    def warninglisted(self) -> bool:
        """On a warninglist: the flag both stores keep beside the record for their default filter."""
        return bool(self.warninglists)

    def status(self, now: datetime) -> str:
        """``active``, ``expired`` (``now`` at or past ``valid_until``) or ``revoked``."""
        return decay.status(self, now)

    def stored_api(self) -> dict[str, Any]:
        """The API form without what changes with the clock (``score``, ``status``): what stores keep
        encoded (store.sqlite.scores.stored_form); ``to_api`` completes it at read time."""
        return {
            "type": self.type,
            "value": self.value,
            "confidence": self.confidence,
            "source": {"feed_name": self.feed_name, "category": self.source_category},
            "first_seen": iso(self.first_seen),
            "last_seen": iso(self.last_seen),
            "sources": list(self.sources),
            "industries": list(self.industries),
            "article_ids": list(self.article_ids),
            "cves": list(self.cves),
            "techniques": list(self.techniques),
            "article_count": self.article_count,
            "cve_count": self.cve_count,
            "technique_count": self.technique_count,
            "sightings": self.sightings,
            "false_positives": self.false_positives,
            "stix_id": self.stix_id,
            "threat_actors": list(self.threat_actors),
            "severity": self.severity,
            "severity_label": severity_label(self.severity),
            "valid_until": iso(self.valid_until),
            "revoked": self.revoked,
            "revoked_at": iso(self.revoked_at) if self.revoked_at else None,
            "revoked_reason": self.revoked_reason or None,
            "warninglisted": self.warninglisted,
            "warninglists": list(self.warninglists),
            # Last, so an expiry can rewrite it at the stored form's end (store.sqlite.scores.completed_form).
            "modified": iso(self.modified),
        }

    def to_api(self, now: datetime | None = None) -> dict[str, Any]:
        """The spec's IOC resource (type, value, confidence, source{feed_name, category}) plus dates, the
        lifecycle and, read at ``now`` as given (a list's status clock, a poll's millisecond; default: the
        status clock now), ``score`` and ``status``."""
        at = now if now is not None else decay.clock(utcnow())
        api = self.stored_api()
        api["modified"] = iso(decay.effective_modified(self, at))  # an expiry is a change (store.decay)
        return {**api, "score": decay.score(self, at), "status": decay.status(self, at)}


SIGHTING_KINDS: tuple[str, ...] = ("seen", "false_positive")


@dataclass(slots=True)
class Sighting:
    """One account's report about a value (POST /api/v1/sightings), kept for the audit
    (``ctiwire sightings list``). It names the account, never the key or its secret."""

    id: str
    user_id: str
    type: str
    value: str
    kind: str  # one of SIGHTING_KINDS
    observed_at: datetime
    created_at: datetime
    note: str = ""


@dataclass(slots=True)
class User:
    """A signed-in account holder; the tier decides limits and default scopes."""

    id: str
    email: str
    tier: str
    created_at: datetime
    # argon2id hash (argon2-cffi's encoded form); None for a user made by the CLI without a password
    password_hash: str | None = None
    # Signed up with CTIWIRE_SIGNUP=verify and the e-mail's link not followed yet: no keys until it is.
    unverified: bool = False


@dataclass(slots=True)
class Session:
    """A signed-in browser session of the account web. ``id`` is the SHA-256 of the cookie's random
    value: the cookie itself is never stored, so a copy of the database opens no session."""

    id: str
    user_id: str
    created_at: datetime
    last_seen_at: datetime


@dataclass(slots=True)
class ApiKey:
    """An API key record. The secret is never stored: only its SHA-256 and a display prefix."""

    id: str
    user_id: str
    name: str
    key_hash: str
    prefix: str
    scopes: list[str]
    created_at: datetime
    active: bool = True
    expires_at: datetime | None = None
    last_used_at: datetime | None = None
    # Saved but its secret not yet handed out (printed or shown): inactive until then, so a creation cut
    # short (a killed CLI) leaves no working key nobody holds; ``keys list`` says "never delivered".
    pending: bool = False
    # A rotated key's former secret (its SHA-256) and when it stops working: the grace a client gets to
    # switch to the new one. ``previous_expires_at`` at or before now: the old secret answers expired_api_key.
    previous_hash: str | None = None
    previous_expires_at: datetime | None = None


@dataclass(slots=True)
class Source:
    """A feed: its identity plus its collection health."""

    name: str
    homepage: str
    feed_url: str
    source_type: str = "rss"
    source_tier: int = 2
    category: str = "commercial"
    enabled: bool = True
    last_attempt_at: datetime | None = None
    last_success_at: datetime | None = None
    last_error: str | None = None
    items_seen: int = 0
    failed_articles: int = 0  # articles skipped, or stored with an extractor's fields empty, by every run
    etag: str | None = None
    last_modified: str | None = None

    @classmethod
    def configured(cls, config: SourceConfig, held: Source | None = None) -> Source:
        """The record of a configured feed: identity from ``config``, health and validators from ``held``."""
        identity = {f: getattr(config, f) for f in ("name", "homepage", "feed_url", "source_type", "source_tier",
                                                     "category", "enabled")}
        return cls(**identity) if held is None else dataclasses.replace(held, **identity)


@dataclass(slots=True)
class Feed:
    """A saved feed: a named set of IOC filters owned by one account (``/api/v1/feeds``).

    ``filters`` holds lists by the IOC list's parameter names (``store.query.IOC_FILTER_FIELDS``), as
    validated by the server; the store keeps them as given.
    """

    id: str
    user_id: str
    name: str
    filters: dict[str, list[str]]
    created_at: datetime
    modified_at: datetime
