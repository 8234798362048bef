"""Sorts, keyset pages, offset and limit on every backend (spec, parameters ``sort``, ``cursor``,
``offset``, ``limit``): each sort breaks ties on id, and a walk by ``after`` returns each row once."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from conformance.factories import article, at, ids

from store.ports import ArticleStore
from store.query import ARTICLE_SORTS, ArticleQuery
from store.records import Article, iso

SORTS = list(ARTICLE_SORTS)
# Heavy ties on every sort key: three rows per publication minute, few scores, few ranks.
ROWS = [article(n, published_at=at(minutes=n // 3), modified_at=at(minutes=(n * 7) % 11),
                severity_score=[9.5, 7.0, 7.0, 3.9, 0.0][n % 5], rank_score=[0.0, 1.5, 1.5, 42.25][n % 4])
        for n in range(1, 48)]


def reference_order(rows: list[Article], sort: str) -> list[str]:
    """The spec's order: sort key, then id, both in the sort's direction."""
    field, descending = ARTICLE_SORTS[sort]
    return [a.id for a in sorted(rows, key=lambda a: (getattr(a, field), a.id), reverse=descending)]


@pytest.fixture
async def loaded(articles: ArticleStore) -> ArticleStore:
    await articles.upsert_articles(ROWS)
    return articles


@pytest.mark.parametrize("sort", SORTS)
async def test_each_sort_orders_by_key_then_id(loaded: ArticleStore, sort: str) -> None:
    rows = await loaded.all_articles(ArticleQuery(sort=sort, limit=1000))
    assert ids(rows) == reference_order(ROWS, sort)


@pytest.mark.parametrize("sort", SORTS)
async def test_keyset_walk_returns_every_row_exactly_once(loaded: ArticleStore, sort: str) -> None:
    field = ARTICLE_SORTS[sort][0]
    walked: list[str] = []
    after: tuple[Any, str] | None = None
    while True:
        page = await loaded.all_articles(ArticleQuery(sort=sort, after=after, limit=5))
        if not page:
            break
        assert len(page) <= 5
        walked += ids(page)
        after = (getattr(page[-1], field), page[-1].id)
    assert walked == reference_order(ROWS, sort)
    assert len(set(walked)) == len(ROWS)


@pytest.mark.parametrize("sort", ["published:desc", "modified:desc"])
async def test_keyset_accepts_times_as_iso_text(loaded: ArticleStore, sort: str) -> None:
    """A cursor may carry a time as RFC 3339 text; it must page exactly like the datetime."""
    first = await loaded.all_articles(ArticleQuery(sort=sort, limit=7))
    field = ARTICLE_SORTS[sort][0]
    as_dt = ArticleQuery(sort=sort, after=(getattr(first[-1], field), first[-1].id), limit=5)
    as_text = ArticleQuery(sort=sort, after=(iso(getattr(first[-1], field)), first[-1].id), limit=5)
    assert ids(await loaded.all_articles(as_text)) == ids(await loaded.all_articles(as_dt))
    assert ids(await loaded.all_articles(as_dt)) == reference_order(ROWS, sort)[7:12]


async def test_keyset_walk_is_stable_while_rows_are_inserted(loaded: ArticleStore) -> None:
    """New rows published later than the walk's position never appear twice or push old rows out."""
    walked: list[str] = []
    after: tuple[Any, str] | None = None
    extra = 1000
    while True:
        page = await loaded.all_articles(ArticleQuery(after=after, limit=6))
        if not page:
            break
        walked += ids(page)
        after = (page[-1].published_at, page[-1].id)
        await loaded.upsert_articles([article(extra, published_at=at(days=1, minutes=extra))])
        extra += 1
    assert walked == reference_order(ROWS, "published:desc")


@pytest.mark.parametrize("sort", SORTS)
async def test_batches_of_iter_articles_concatenate_to_the_page(loaded: ArticleStore, sort: str) -> None:
    query = ArticleQuery(sort=sort, limit=23, offset=4)
    batches = [batch async for batch in loaded.iter_articles(query, batch_size=4)]
    assert [len(b) for b in batches] == [1, 4, 4, 4, 4, 4, 2]  # the first batch is a fifth, at least a row
    assert [a.id for b in batches for a in b] == reference_order(ROWS, sort)[4:27]


@pytest.mark.parametrize(("offset", "limit"), [(0, 1), (0, 10), (3, 5), (40, 50), (47, 5), (100, 5)])
async def test_offset_and_limit(loaded: ArticleStore, offset: int, limit: int) -> None:
    rows = await loaded.all_articles(ArticleQuery(offset=offset, limit=limit))
    assert ids(rows) == reference_order(ROWS, "published:desc")[offset:offset + limit]


async def test_offset_combines_with_after(loaded: ArticleStore) -> None:
    order = reference_order(ROWS, "severity:desc")
    first = await loaded.all_articles(ArticleQuery(sort="severity:desc", limit=10))
    after = (first[-1].severity_score, first[-1].id)
    rows = await loaded.all_articles(ArticleQuery(sort="severity:desc", after=after, offset=2, limit=4))
    assert ids(rows) == order[12:16]


async def test_counts_ignore_after_offset_and_limit(loaded: ArticleStore) -> None:
    query = ArticleQuery(after=(at(minutes=5), ROWS[0].id), offset=3, limit=2, min_severity=7.0)
    want = sum(1 for a in ROWS if a.severity_score >= 7.0)
    assert await loaded.count_articles(query, exact=True) == want
    assert await loaded.count_articles(query, exact=False) == want


@pytest.mark.parametrize("sort", SORTS)
async def test_encoded_rows_are_the_list_form_in_the_same_walk(loaded: ArticleStore, sort: str) -> None:
    """``iter_article_rows`` (what exports stream) yields each row's list form and keyset position."""
    query = ArticleQuery(sort=sort, limit=1000)
    records = await loaded.all_articles(query)
    rows = [row async for batch in loaded.iter_article_rows(query, batch_size=7) for row in batch]
    field = ARTICLE_SORTS[sort][0]
    assert [position for position, _ in rows] == [(getattr(a, field), a.id) for a in records]
    assert [orjson.loads(encoded) for _, encoded in rows] == [a.list_form() for a in records]
    first = records[len(records) // 2]
    after = [row async for batch in loaded.iter_article_rows(
        ArticleQuery(sort=sort, limit=1000, after=(getattr(first, field), first.id))) for row in batch]
    assert [p[1] for p, _ in after] == reference_order(ROWS, sort)[len(records) // 2 + 1:]
