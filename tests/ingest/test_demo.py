"""The demo dataset and the article -> IOC record aggregation."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import timedelta
from typing import Any

from ingest.aggregate import aggregate, technique_mentions
from ingest.demo import generate, seed_store
from store.ports import Stores
from store.query import ArticleQuery, IocQuery
from store.records import CATEGORIES, Article, ArticleIoc, utcnow


def _rows(n: int) -> list[Article]:
    now = utcnow()
    return [a for batch in generate(n, now) for a in batch]


def test_the_demo_is_deterministic_and_covers_the_filters() -> None:
    now = utcnow()
    first = [a for b in generate(600, now) for a in b]
    again = [a for b in generate(600, now) for a in b]
    assert first == again
    assert [a for b in generate(600, now, batch_size=5000) for a in b] == first  # batches do not change rows
    assert {a.category for a in first} == set(CATEGORIES)
    assert {a.source_type for a in first} == {"rss", "community"} and {a.source_tier for a in first} == {1, 2, 3, 4}
    assert {a.severity_label for a in first} == {"critical", "high", "medium", "low"}
    assert any(a.is_archived for a in first) and any(not a.iocs for a in first)
    assert any(a.ai_summary is None for a in first) and any(a.audio_url for a in first)
    assert {a.submission_type for a in first} == {"rss_auto", "user_submitted"}
    assert all(now - timedelta(days=401) < a.published_at <= now for a in first)
    assert any(a.published_at < now - timedelta(days=365) for a in first)
    assert {i.type for a in first for i in a.iocs} == {"ipv4", "ipv6", "domain", "url", "md5", "sha1", "sha256",
                                                        "sha512", "email", "cve"}
    assert sum(a.published_at > now - timedelta(days=1) for a in first) >= 50


def test_aggregation_makes_one_record_per_indicator() -> None:
    rows = _rows(500)
    records = aggregate(rows, {})
    def mentioned(article: Any) -> list[Any]:  # its indicators and, as mitre-attack records, its techniques
        return [*article.iocs, *technique_mentions(article)]

    mentions = Counter((i.type, i.value) for a in rows for i in mentioned(a))
    assert len(records) == len(mentions) and any(r.type == "mitre-attack" for r in records)
    for record in records:
        referencing = [a for a in rows if any((i.type, i.value) == (record.type, record.value)
                                              for i in mentioned(a))]
        assert sorted(record.article_ids) == sorted(a.id for a in referencing)
        assert record.first_seen == min(a.fetched_at for a in referencing)


def test_confidence_rises_with_corroboration_and_government_sources() -> None:
    base = _rows(1)[0]
    mention = ArticleIoc("domain", "c2.bad.example.net", "low")
    articles = [replace(base, id=f"a{i}", source_name=f"S{i}", iocs=[mention]) for i in range(3)]
    assert aggregate(articles[:1], {})[0].confidence == "low"
    assert aggregate(articles[:2], {})[0].confidence == "medium"
    assert aggregate(articles, {})[0].confidence == "high"
    assert aggregate(articles[:1], {"S0": "government"})[0].confidence == "high"


async def test_seeding_fills_the_store_idempotently(stores: Stores) -> None:
    articles, iocs = await seed_store(stores, 700)
    again = await seed_store(stores, 700)
    stored = await stores.articles.count_articles(ArticleQuery(include_archived=True), exact=True)
    assert articles == stored == 700 and again[0] == 700
    assert await stores.iocs.count_iocs(IocQuery(include_warninglisted=True)) == iocs > 0
    assert len(await stores.sources.list_sources()) >= 30


async def test_the_demo_shows_every_status_and_every_type_active(stores: Stores) -> None:
    await seed_store(stores, 1500)
    now = utcnow()
    records = await stores.iocs.all_iocs(IocQuery(limit=100_000))
    statuses = Counter(r.status(now) for r in records)
    assert statuses["active"] and statuses["expired"] and statuses["revoked"]
    active = {r.type for r in await stores.iocs.all_iocs(IocQuery(limit=100_000, statuses=("active",)))}
    assert active == {r.type for r in records}  # the default lists and exports still show every type


def test_demo_addresses_are_on_no_warninglist() -> None:
    from pymispwarninglists import WarningLists

    lists = WarningLists(slow_search=True)
    addresses = sorted({i.value for a in _rows(400) for i in a.iocs if i.type in ("ipv4", "ipv6")})
    assert addresses and not [(value, [w.name for w in lists.search(value)]) for value in addresses[::25]
                              if lists.search(value)]
