"""Article writes and single reads on every backend: round trip, upsert counts, de-duplication look-ups,
references, the sources aggregate and the data version."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conformance.factories import article, at, mention, replace, technique

from store.base import NotFound
from store.ports import ArticleStore
from store.query import ArticleQuery
from store.records import Article, ArticleIoc, MitreTechnique


def rich(n: int) -> Article:
    """An article with every optional field set, nested lists included."""
    return article(
        n, ai_summary="Summary by a model.", image_url="https://img.example/1.png", categorized_at=at(days=-1),
        tech_tags=["windows", "vpn"], industry_tags=["finance"], threat_actors=["lazarus"],
        severity_reasons=["actively exploited"], mitre_techniques=[technique("T1059.001", "PowerShell")],
        iocs=[mention("evil.example"), ArticleIoc(type="ipv4", value="203.0.113.9", confidence="high")],
        cve_ids=["CVE-2024-1234"], tags=["ransomware"], content="Full text.", audio_url="https://a.example/1.mp3",
        audio_duration_seconds=61.5, audio_voice="alloy", submitted_by_username="ana", score=7, upvotes=9,
        downvotes=2, comment_count=3, vouch_count=1, rank_score=12.75, severity_score=8.4, source_tier=1,
        published_at=datetime(2025, 2, 3, 4, 5, 6, 789000, tzinfo=UTC),
    )


async def test_round_trip_keeps_every_field(articles: ArticleStore) -> None:
    original = rich(1)
    await articles.upsert_articles([original])
    stored = await articles.get_article(original.id)
    assert stored == original
    assert stored.mitre_techniques == [MitreTechnique("T1059.001", "PowerShell", "execution", "high")]
    assert stored.published_at.tzinfo is not None and stored.published_at.utcoffset() == UTC.utcoffset(None)


async def test_unknown_article_is_not_found(articles: ArticleStore) -> None:
    with pytest.raises(NotFound):
        await articles.get_article("00000000-0000-0000-0000-000000000000")


async def test_upsert_counts_inserted_and_changed_rows_only(articles: ArticleStore) -> None:
    rows = [article(n) for n in range(1, 6)]
    assert await articles.upsert_articles(rows) == 5
    assert await articles.upsert_articles(rows) == 0
    changed = replace(rows[2], title="A new title", severity_score=9.1)
    assert await articles.upsert_articles([changed, rows[0], article(6)]) == 2
    assert (await articles.get_article(changed.id)).title == "A new title"
    assert await articles.upsert_articles([]) == 0


async def test_a_later_copy_in_one_batch_wins(articles: ArticleStore) -> None:
    first = article(1)
    await articles.upsert_articles([first, replace(first, title="Second copy")])
    assert (await articles.get_article(first.id)).title == "Second copy"


async def test_replacing_a_row_updates_every_filter_field(articles: ArticleStore) -> None:
    row = article(1, iocs=[mention("x.example")], source_name="Old")
    await articles.upsert_articles([row])
    await articles.upsert_articles([replace(row, iocs=[], source_name="New", is_archived=True)])
    assert await articles.all_articles(ArticleQuery(has_iocs=True)) == []
    moved = ArticleQuery(sources=("New",), include_archived=True)
    assert [a.id for a in await articles.all_articles(moved)] == [row.id]


async def test_find_article_by_canonical_url_or_content_hash(articles: ArticleStore) -> None:
    row = article(7, canonical_url="https://news.example/canon", content_hash="abc123")
    await articles.upsert_articles([article(1), row])
    assert (await articles.find_article(canonical_url="https://news.example/canon")) == row
    assert (await articles.find_article(content_hash="abc123")) == row
    assert await articles.find_article(canonical_url="https://news.example/none") is None
    assert await articles.find_article(content_hash="nope") is None
    assert await articles.find_article() is None


async def test_article_refs_returns_existing_ids_only(articles: ArticleStore) -> None:
    rows = [article(n, source_name=f"Source {n}") for n in range(1, 4)]
    await articles.upsert_articles(rows)
    refs = await articles.article_refs([rows[2].id, "missing", rows[0].id, rows[2].id])
    assert refs == {rows[2].id: (rows[2].title, rows[2].url, "Source 3", rows[2].published_at),
                    rows[0].id: (rows[0].title, rows[0].url, "Source 1", rows[0].published_at)}
    assert await articles.article_refs([]) == {}


async def test_get_articles_reads_existing_ids_in_chunks(articles: ArticleStore) -> None:
    rows = [article(n) for n in range(1, 604)]  # more ids than one SQLite statement binds
    await articles.upsert_articles(rows)
    wanted = [rows[602].id, "missing", rows[0].id, rows[602].id, *(r.id for r in rows[1:600])]
    found = await articles.get_articles(wanted)
    assert found == {r.id: r for r in rows[:600] + [rows[602]]}
    assert await articles.get_articles([]) == {}


async def test_article_sources_counts_by_name_type_and_tier(articles: ArticleStore) -> None:
    rows = [article(1, source_name="Beta", source_type="community", source_tier=3),
            article(2, source_name="Alpha", source_tier=1), article(3, source_name="Alpha", source_tier=1),
            article(4, source_name="Gamma", is_archived=True)]
    await articles.upsert_articles(rows)
    assert await articles.article_sources() == [("Alpha", "rss", 1, 2), ("Beta", "community", 3, 1),
                                             ("Gamma", "rss", 2, 1)]


async def test_every_article_write_bumps_the_data_version(articles: ArticleStore) -> None:
    start = await articles.data_version()
    await articles.upsert_articles([article(1)])
    assert await articles.data_version() == start + 1
    await articles.upsert_articles([article(1)])  # unchanged rows still count as a write
    assert await articles.data_version() == start + 2
    await articles.upsert_articles([])
    assert await articles.data_version() == start + 2
