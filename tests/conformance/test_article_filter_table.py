"""The article filter table (store.article_filters) is the one declaration every consumer reads.

The table covers ArticleQuery exactly, each group and builder it names exists, and a filter added as
one entry only is read by the parser, echoed in meta.filters, documented in OpenAPI and applied by
every backend.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest
from conformance.factories import article, at

from config.tiers import TIERS
from server import article_params
from server.article_params import GROUPS, parse_article_request
from server.articles import filter_params
from server.errors import BadRequest
from server.params import Params
from store import article_filters
from store.article_filters import ARTICLE_FILTERS, NON_FILTER_FIELDS, ArticleFilter, AtLeast, Builder
from store.mongo import queries as mongo_queries
from store.ports import ArticleStore
from store.query import ArticleQuery
from store.sqlite import queries as sqlite_queries

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_every_entry_sets_a_field_and_every_filter_field_has_an_entry() -> None:
    fields = {f.name for f in dataclasses.fields(ArticleQuery)}
    assert {e.field for e in ARTICLE_FILTERS} == fields - NON_FILTER_FIELDS
    assert NON_FILTER_FIELDS <= fields
    assert len({e.name for e in ARTICLE_FILTERS}) == len(ARTICLE_FILTERS)


def test_every_group_and_builder_named_in_the_table_exists() -> None:
    assert {e.group for e in ARTICLE_FILTERS if e.group} == set(GROUPS)
    builders = {e.predicate.name for e in ARTICLE_FILTERS if isinstance(e.predicate, Builder)}
    assert builders == set(sqlite_queries.BUILDERS) == set(mongo_queries.BUILDERS)


@dataclasses.dataclass(frozen=True, slots=True)
class RankedQuery(ArticleQuery):
    """ArticleQuery with the field of a filter that exists only in this test."""

    min_rank: float | None = None


MIN_RANK = ArticleFilter("min_rank", "min_rank", "number", "Articles ranked at least this high.",
                         predicate=AtLeast("rank_score"), bounds=(0, 1000))


@pytest.fixture
def min_rank(monkeypatch: pytest.MonkeyPatch) -> ArticleFilter:
    """A throwaway filter: one table entry (and the query field it sets)."""
    monkeypatch.setattr(article_filters, "ARTICLE_FILTERS", (*ARTICLE_FILTERS, MIN_RANK))
    monkeypatch.setattr(article_params, "ArticleQuery", RankedQuery)
    return MIN_RANK


def _request(**args: str) -> article_params.ArticleRequest:
    params = Params({name: [value.encode()] for name, value in args.items()})
    return parse_article_request(params, TIERS["free"], NOW, "secret")


@pytest.mark.usefixtures("min_rank")
def test_an_added_entry_is_parsed_echoed_and_documented() -> None:
    request = _request(min_rank="2.5")
    assert isinstance(request.query, RankedQuery) and request.query.min_rank == 2.5
    assert request.filters["min_rank"] == 2.5
    assert "min_rank" not in _request().filters
    for bad in ("high", "1001"):
        with pytest.raises(BadRequest) as refused:
            _request(min_rank=bad)
        assert refused.value.details == {"parameter": "min_rank"}
    documented = {p["name"]: p for p in filter_params()}["min_rank"]
    assert documented == {"name": "min_rank", "in": "query", "required": False,
                          "schema": {"type": "number", "minimum": 0, "maximum": 1000},
                          "description": "Articles ranked at least this high."}


@pytest.mark.usefixtures("min_rank")
async def test_an_added_entry_is_applied_by_every_backend(articles: ArticleStore) -> None:
    await articles.upsert_articles([article(n, rank_score=float(n), published_at=at(minutes=n)) for n in range(1, 7)])
    rows = await articles.all_articles(RankedQuery(min_rank=4.0, limit=100))
    assert sorted(a.rank_score for a in rows) == [4.0, 5.0, 6.0]
    assert await articles.count_articles(RankedQuery(min_rank=4.0), exact=True) == 3
    assert len(await articles.all_articles(RankedQuery(limit=100))) == 6
