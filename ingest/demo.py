"""The demo dataset: deterministic, enriched articles and their IOC records for the embedded default.

``scripts/serve`` loads it into an empty database so that every endpoint answers with data
offline. It exercises every filter of GET /api/v1/articles (sources of each type and tier, every
category and industry, severities across the buckets, archived rows, community submissions, articles
with and without AI summaries, audio and IOCs). IOC values are synthetic: addresses come from a few
networks that no MISP warninglist names (not from the documentation ranges, which the lists name and the
extractor drops), and their last reports spread over 400 days, so the demo shows active, expired and
revoked indicators while the default lists and exports still hold every type.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

from config.sources import SHIPPED, SourceConfig, parse_sources
from ingest.aggregate import aggregate
from ingest.stix_context import context_facts
from store.ports import Stores
from store.records import (
    CATEGORIES,
    INDUSTRY_TAGS,
    LEGACY_CATEGORIES,
    Article,
    ArticleIoc,
    MitreTechnique,
    Source,
    ms,
    utcnow,
)

DEMO_NAMESPACE = uuid.UUID("0c1d6f0e-2b7a-5e8e-9c55-8a3f1e1f4d21")
BATCH = 500
# Articles per write at seeding: each write's random inserts into the record and link indexes share pages
# the more there are (at 200,000 articles, 5,000 per write half the bytes written per article of 500), in
# the writer's bulk page cache (store.ports.Lifecycle.bulk).
SEED_BATCH = 5_000
Progress = Callable[[int], None]

TECHNIQUES = (
    ("T1566.001", "Spearphishing Attachment", "initial-access"),
    ("T1190", "Exploit Public-Facing Application", "initial-access"),
    ("T1059.001", "PowerShell", "execution"),
    ("T1486", "Data Encrypted for Impact", "impact"),
    ("T1071.001", "Web Protocols", "command-and-control"),
    ("T1110.003", "Password Spraying", "credential-access"),
    ("T1041", "Exfiltration Over C2 Channel", "exfiltration"),
    ("T1053.005", "Scheduled Task", "persistence"),
)
ACTORS = ("apt28", "apt29", "lazarus group", "fin7", "scattered spider", "sandworm", "volt typhoon", "lockbit")
TECH_TAGS = ("windows", "linux", "cloud", "kubernetes", "vpn", "email", "browser", "ics", "mobile", "ai")
PRODUCTS = ("Ivanti Connect Secure", "Fortinet FortiOS", "Citrix NetScaler", "Microsoft Exchange",
            "Atlassian Confluence", "VMware ESXi", "Cisco IOS XE", "Palo Alto PAN-OS")
THREATS = ("ransomware", "phishing campaign", "botnet", "supply-chain attack", "data breach", "backdoor",
           "zero-day exploitation", "credential theft")
TLDS = ("top", "xyz", "info", "net", "ru", "online", "site", "biz")
WORDS = ("update", "secure", "login", "cdn", "sync", "portal", "verify", "cloud", "mail", "files")
# Addresses outside the documentation ranges (RFC 5737, RFC 3849), which the MISP warninglists name (and the
# extractor drops): networks no list of pymispwarninglists 1.7.0 names, so the demo's addresses stay listed.
IPV4_NETS = ("45.137.21", "91.215.85", "176.113.115")
IPV6_NET = "2a0e:97c0"
# Every REVOKED_EVERY-th record (by type and value) is revoked at seeding: the demo shows revoked records
# beside the active ones and those whose score expired (their last reports spread over 400 days).
REVOKED_EVERY = 97
REVOKED_REASON = "demo: reported benign"


def _pick(rng: random.Random, options: tuple[str, ...], k: int) -> list[str]:
    return sorted(rng.sample(options, k))


def _age_hours(rng: random.Random, i: int, n: int) -> float:
    """The age of article ``i`` of ``n``: oldest first, as feeds deliver them, so a store's time-ordered
    indexes grow at their end as they do in service rather than at random places (which made a seeding slow
    down with the data: BENCHMARKS.md, ``scripts/bench scale``). 10% of rows within a day, 30% within a week,
    the rest over 400 days (past the Pro lookback too)."""
    newer = 1.0 - (i + rng.random()) / n  # the share of the rows that are newer than this one
    if newer < 0.1:
        return 0.05 + newer / 0.1 * (23.0 - 0.05)
    if newer < 0.4:
        return 24.0 + (newer - 0.1) / 0.3 * (7 * 24.0 - 24.0)
    return 7 * 24.0 + (newer - 0.4) / 0.6 * (400 * 24.0 - 7 * 24.0)


def _iocs(rng: random.Random, cves: list[str]) -> list[ArticleIoc]:
    if rng.random() < 0.2:
        return []
    word, tld = rng.choice(WORDS), rng.choice(TLDS)
    domain = f"{word}-{rng.randrange(400)}.{rng.choice(WORDS)}{rng.randrange(50)}.{tld}"
    def conf() -> str:
        return rng.choice(("high", "medium", "low"))

    address = f"{rng.choice(IPV4_NETS)}.{rng.randrange(1, 255)}"
    found = [ArticleIoc("domain", domain, conf()), ArticleIoc("ipv4", address, conf()),
             ArticleIoc("sha256", hashlib.sha256(f"{domain}{rng.random()}".encode()).hexdigest(), conf())]
    if rng.random() < 0.5:
        found.append(ArticleIoc("url", f"https://{domain}/{rng.choice(WORDS)}/{rng.randrange(1000)}.php", conf()))
    if rng.random() < 0.3:
        found.append(ArticleIoc("md5", hashlib.md5(domain.encode(), usedforsecurity=False).hexdigest(), conf()))
    if rng.random() < 0.15:
        found.append(ArticleIoc("ipv6", f"{IPV6_NET}:{rng.randrange(65536):x}::{rng.randrange(1, 65536):x}", conf()))
    if rng.random() < 0.1:
        found.append(ArticleIoc("sha1", hashlib.sha1(domain.encode(), usedforsecurity=False).hexdigest(), conf()))
    if rng.random() < 0.05:
        found.append(ArticleIoc("sha512", hashlib.sha512(domain.encode()).hexdigest(), conf()))
    if rng.random() < 0.15:
        found.append(ArticleIoc("email", f"{rng.choice(WORDS)}@{domain}", conf()))
    found.extend(ArticleIoc("cve", cve, "high") for cve in cves)
    return found


def _article(i: int, n: int, rng: random.Random, source: SourceConfig, now: datetime) -> Article:
    age = _age_hours(rng, i, n)
    published = ms(now - timedelta(hours=age))
    fetched = ms(published + timedelta(minutes=rng.randrange(1, 90)))
    fetched = min(fetched, now)
    modified = min(ms(fetched + timedelta(minutes=rng.randrange(0, 600))), now)
    category = CATEGORIES[i % len(CATEGORIES)]
    product, threat = rng.choice(PRODUCTS), rng.choice(THREATS)
    cves = [f"CVE-{rng.randrange(2019, 2027)}-{rng.randrange(1000, 60000)}" for _ in range(rng.randrange(0, 3))]
    actors = _pick(rng, ACTORS, rng.randrange(0, 3))
    techniques = [MitreTechnique(t[0], t[1], t[2], rng.choice(("high", "medium")))
                  for t in rng.sample(TECHNIQUES, rng.randrange(0, 4))]
    score = round(rng.uniform(0.1, 10.0), 1)
    title = f"{threat.capitalize()} targets {product}" + (f" via {cves[0]}" if cves else "") + f" (#{i})"
    summary = (f"Researchers describe a {threat} affecting {product}"
               + (f" attributed to {actors[0].title()}" if actors else "") + ".")
    upvotes, downvotes = rng.randrange(0, 200), rng.randrange(0, 20)
    community = source.source_type == "community"
    article_id = str(uuid.uuid5(DEMO_NAMESPACE, str(i)))
    ai_summary = None if i % 7 == 0 else f"{summary} The advisory lists indicators and mitigations" + (
        f" for {', '.join(cves)}." if cves else ".")
    iocs = _iocs(rng, cves)
    content = f"{title}\n\n{summary}\n\n" + "\n".join(f"{ioc.type}: {ioc.value}" for ioc in iocs)
    return Article(
        id=article_id, title=title, url=f"{source.homepage.rstrip('/')}/demo/{i}",
        canonical_url=f"https://ctiwire.local/articles/{article_id}", summary=summary,
        published_at=published, fetched_at=fetched, modified_at=modified, created_at=fetched,
        source_name=source.name, source_type=source.source_type, source_tier=source.source_tier,
        category=category, category_legacy=LEGACY_CATEGORIES[category],
        content_type=("security", "educational", "news")[i % 3] if i % 5 else "educational",
        severity_score=score, severity_reasons=[f"demo score {score}"], ai_summary=ai_summary,
        image_url=f"https://ctiwire.local/img/{i % 50}.png", categorized_at=fetched,
        ai_classification=category, ai_classification_confidence=round(rng.uniform(0.55, 0.99), 2),
        tech_tags=_pick(rng, TECH_TAGS, rng.randrange(1, 4)),
        industry_tags=_pick(rng, INDUSTRY_TAGS, rng.randrange(1, 3)),
        threat_actors=actors, score=upvotes - downvotes, upvotes=upvotes, downvotes=downvotes,
        comment_count=rng.randrange(0, 60), vouch_count=rng.randrange(0, 10),
        rank_score=round((upvotes - downvotes) / (1.0 + age / 24.0), 4),
        submission_type="user_submitted" if community and i % 2 else "rss_auto",
        submitted_by_username=f"analyst{i % 40}" if community and i % 2 else None,
        audio_url=f"https://ctiwire.local/audio/{article_id}.mp3" if i % 4 == 0 else None,
        audio_duration_seconds=float(60 + i % 300) if i % 4 == 0 else None,
        audio_voice="alloy" if i % 4 == 0 else None, mitre_techniques=techniques, cve_ids=cves,
        is_archived=i % 50 == 49, iocs=iocs, tags=[f"#{category}", f"#{threat.split()[0]}"], content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
    )


def demo_sources() -> list[SourceConfig]:
    return parse_sources(SHIPPED.read_text(encoding="utf-8"), str(SHIPPED))


def generate(n: int, now: datetime, seed: int = 7, batch_size: int = BATCH) -> Iterator[list[Article]]:
    """``n`` demo articles in batches of ``batch_size``; the same ``n``, ``now`` and ``seed`` give the same rows."""
    rng = random.Random(seed)
    sources = demo_sources()
    batch: list[Article] = []
    for i in range(n):
        batch.append(_article(i, n, rng, sources[i % len(sources)], now))
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


async def seed_store(stores: Stores, n: int, now: datetime | None = None,
                     progress: Progress | None = None) -> tuple[int, int]:
    """Load ``n`` demo articles and their IOC records; returns (articles, IOC records stored)."""
    sources = demo_sources()
    for s in sources:
        await stores.sources.upsert_source(Source.configured(s))
    categories = {s.name: s.category for s in sources}
    done, keys, now = 0, set[tuple[str, str]](), now or utcnow()
    async with stores.lifecycle.bulk():
        for batch in generate(n, now, batch_size=SEED_BATCH):
            await stores.articles.upsert_articles(batch)
            records = aggregate(batch, categories)
            await stores.iocs.upsert_iocs(records)
            await stores.context.put_context(context_facts(batch))
            keys.update((r.type, r.value) for r in records)
            done += len(batch)
            if progress is not None:
                progress(done)
        for ioc_type, value in sorted(keys)[::REVOKED_EVERY]:
            await stores.iocs.revoke_ioc(ioc_type, value, REVOKED_REASON, now)
    return done, len(keys)
