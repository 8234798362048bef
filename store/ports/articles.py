"""Articles: the collected reports, their list forms and the sources that wrote them."""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Iterable, Sequence

import orjson

from store.base import ArticleRefRow, ArticleRow, NotFound
from store.csvform import csv_line
from store.ports.lifecycle import Versioned
from store.query import ArticleQuery
from store.records import Article


class ArticleStore(Versioned):
    """Async storage of articles (GET /api/v1/articles, exports, de-duplication while collecting)."""

    @abc.abstractmethod
    async def upsert_articles(self, articles: Sequence[Article]) -> int:
        """Insert or replace by id; returns how many rows changed. Bumps the data version."""

    @abc.abstractmethod
    async def get_article(self, article_id: str) -> Article:
        """One article by id; NotFound otherwise."""

    @abc.abstractmethod
    async def find_article(self, *, canonical_url: str | None = None,
                           content_hash: str | None = None) -> Article | None:
        """The article with this canonical URL or content hash, for de-duplication."""

    @abc.abstractmethod
    def iter_articles(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[Article]]:
        """Rows matching ``query`` in its sort order, ``query.limit`` at most, in batches."""

    async def iter_article_rows(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[ArticleRow]]:
        """Like ``iter_articles``, as (keyset position, list form encoded as JSON) pairs: exports stream the
        bytes without decoding records. Backends that keep the encoding precomputed override this."""
        async for batch in self.iter_articles(query, batch_size):
            yield [((getattr(a, query.sort_field), a.id), orjson.dumps(a.list_form())) for a in batch]

    async def iter_article_csv_rows(self, query: ArticleQuery,
                                    batch_size: int = 500) -> AsyncIterator[list[ArticleRow]]:
        """Like ``iter_article_rows``, with each row's CSV line (``store.csvform``, every column) as its bytes."""
        async for batch in self.iter_article_rows(query, batch_size):
            yield [(position, csv_line(orjson.loads(encoded))) for position, encoded in batch]

    @abc.abstractmethod
    async def count_articles(self, query: ArticleQuery, exact: bool) -> int:
        """Exact count, or a fast estimate when ``exact`` is False."""

    @abc.abstractmethod
    async def article_sources(self) -> list[tuple[str, str, int, int]]:
        """(source_name, source_type, source_tier, article count) for every source with articles."""

    async def get_articles(self, ids: Iterable[str]) -> dict[str, Article]:
        """Each existing article of ``ids``, by id; backends read them in a query per chunk of ids."""
        found = {}
        for article_id in dict.fromkeys(ids):
            try:
                found[article_id] = await self.get_article(article_id)
            except NotFound:
                continue
        return found

    async def article_refs(self, ids: Iterable[str]) -> dict[str, ArticleRefRow]:
        """(title, url, source_name, published_at) of each existing article in ``ids``; backends may do it in
        one query."""
        refs: dict[str, ArticleRefRow] = {}
        for article_id in dict.fromkeys(ids):
            try:
                article = await self.get_article(article_id)
            except NotFound:
                continue
            refs[article_id] = (article.title, article.url, article.source_name, article.published_at)
        return refs

    async def all_articles(self, query: ArticleQuery) -> list[Article]:
        """Every row of ``query`` in one list (for tests and small pages)."""
        rows: list[Article] = []
        async for batch in self.iter_articles(query):
            rows.extend(batch)
        return rows
