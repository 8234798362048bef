"""Full-text search on every backend (spec, parameters ``q`` and ``q_field``): every term must match,
stemmed and case-insensitive, and ``-term`` excludes. ``default`` searches title and summary through the
full-text index (FTS5 on SQLite, ``$text`` on MongoDB, which mongomock lacks: those cases are skipped
there and run on a real server); ``title``, ``summary`` and ``ai_summary`` match word prefixes everywhere.
"""

from __future__ import annotations

import pytest
from conformance.factories import article, at, needs_text_index

from store.ports import ArticleStore
from store.query import ArticleQuery, TextQuery

ROWS = [
    article(1, title="Ransomware attack hits hospital", summary="Attackers encrypted patient records."),
    article(2, title="New phishing campaign", summary="The attacked banks were warned about ransomware."),
    article(3, title="Patch Tuesday", summary="Microsoft fixes vulnerabilities.",
            ai_summary="Ransomware gangs exploit the flaw."),
    article(4, title="Exploited VPN flaw", summary="Attackers are exploiting a VPN bug; ransomware follows."),
    article(5, title="RANSOMWARE roundup", summary="Weekly digest of phishing lures."),
    article(6, title="Ransomware archive", summary="Old ransomware news.", is_archived=True),
]
N = {a.id: n for n, a in enumerate(ROWS, start=1)}

INDEXED = [
    ("one term", ("ransomware",), (), {1, 2, 4, 5}),
    ("stem of the query", ("attack",), (), {1, 2, 4}),
    ("inflected query", ("attacks",), (), {1, 2, 4}),
    ("case-insensitive", ("RANSOMWARE",), (), {1, 2, 4, 5}),
    ("every term must match", ("ransomware", "phishing"), (), {2, 5}),
    ("stemmed verbs", ("exploit",), (), {4}),
    ("exclusion", ("ransomware",), ("phishing",), {1, 4}),
    ("exclusion is stemmed", ("ransomware",), ("attacks",), {5}),
    ("no match", ("ransomware", "kernel"), (), set()),
]
SCANNED = [
    ("title word prefix", "title", ("ransom",), (), {1, 5}),
    ("title every term", "title", ("patch", "tues"), (), {3}),
    ("title not mid-word", "title", ("somware",), (), set()),
    ("summary prefix", "summary", ("attack",), (), {1, 2, 4}),
    ("summary exclusion", "summary", ("attack",), ("vpn",), {1, 2}),
    ("ai summary", "ai_summary", ("ransomware",), (), {3}),
    ("ai summary exclusion keeps rows without one", "ai_summary", (), ("ransomware",), {1, 2, 4, 5}),
]


@pytest.fixture
async def loaded(articles: ArticleStore) -> ArticleStore:
    await articles.upsert_articles(ROWS)
    return articles


async def matches(articles: ArticleStore, text: TextQuery, **filters: object) -> set[int]:
    rows = await articles.all_articles(ArticleQuery(text=text, limit=100, **filters))  # type: ignore[arg-type]
    return {N[a.id] for a in rows}


@pytest.mark.parametrize(("name", "terms", "excluded", "want"), INDEXED, ids=[c[0] for c in INDEXED])
async def test_default_field_uses_the_full_text_index(loaded: ArticleStore, backend: str, name: str,
                                                      terms: tuple[str, ...], excluded: tuple[str, ...],
                                                      want: set[int]) -> None:
    needs_text_index(backend)
    text = TextQuery(terms=terms, excluded=excluded)
    assert await matches(loaded, text) == want
    assert await loaded.count_articles(ArticleQuery(text=text), exact=True) == len(want)


async def test_text_combines_with_filters_sorts_and_archived(loaded: ArticleStore, backend: str) -> None:
    needs_text_index(backend)
    text = TextQuery(terms=("ransomware",))
    assert await matches(loaded, text, include_archived=True) == {1, 2, 4, 5, 6}
    assert await matches(loaded, text, until=at(minutes=2)) == {1, 2}
    rows = await loaded.all_articles(ArticleQuery(text=text, sort="published:asc", limit=2))
    assert [N[a.id] for a in rows] == [1, 2]
    after = (rows[-1].published_at, rows[-1].id)
    rest = await loaded.all_articles(ArticleQuery(text=text, sort="published:asc", after=after, limit=10))
    assert [N[a.id] for a in rest] == [4, 5]


async def test_exclusions_alone_keep_every_other_row(loaded: ArticleStore) -> None:
    # No positive term, so no index: every backend scans title and summary.
    assert await matches(loaded, TextQuery(terms=(), excluded=("phishing",))) == {1, 3, 4}


@pytest.mark.parametrize(("name", "field", "terms", "excluded", "want"), SCANNED, ids=[c[0] for c in SCANNED])
async def test_other_fields_match_word_prefixes(loaded: ArticleStore, name: str, field: str, terms: tuple[str, ...],
                                                excluded: tuple[str, ...], want: set[int]) -> None:
    text = TextQuery(terms=terms, excluded=excluded, field=field)
    assert await matches(loaded, text) == want
    assert await loaded.count_articles(ArticleQuery(text=text), exact=True) == len(want)
