"""Articles on MongoDB: one document per article in ``articles`` (text index on title and summary)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable, Sequence

from pymongo import ReplaceOne

from store.base import ArticleRefRow, NotFound, keyset_pages
from store.mongo.documents import Doc, article_doc, from_keyed
from store.mongo.errors import guarded, translated
from store.mongo.part import MongoPart
from store.mongo.queries import article_query, article_sort
from store.ports import ArticleStore
from store.query import ArticleQuery
from store.records import Article, ms

_ESTIMATE_CAP = 10_000  # the "planned" count stops here, as the SQLite backend's does


class MongoArticles(MongoPart, ArticleStore):
    """Articles in the ``articles`` collection."""

    @guarded
    async def upsert_articles(self, articles: Sequence[Article]) -> int:
        if not articles:
            return 0
        ops = [ReplaceOne({"_id": a.id}, article_doc(a), upsert=True) for a in articles]
        # Ordered, so a later copy of an id in the batch wins, as in the SQLite backend. The server does
        # not count a replacement by an identical document as modified: unchanged rows count 0.
        try:
            result = await self._c("articles").bulk_write(ops, ordered=True)
        finally:
            await self._bump()
        return result.upserted_count + result.modified_count

    @guarded
    async def get_article(self, article_id: str) -> Article:
        doc = await self._c("articles").find_one({"_id": article_id})
        if doc is None:
            raise NotFound(f"no article {article_id!r}")
        return from_keyed(Article, doc)

    @guarded
    async def find_article(self, *, canonical_url: str | None = None,
                           content_hash: str | None = None) -> Article | None:
        name, value = ("canonical_url", canonical_url) if canonical_url else ("content_hash", content_hash)
        if value is None:
            return None
        doc = await self._c("articles").find_one({name: value})
        return None if doc is None else from_keyed(Article, doc)

    async def _article_page(self, q: ArticleQuery, size: int) -> list[Article]:
        cursor = self._c("articles").find(article_query(q)).sort(article_sort(q)).skip(q.offset).limit(size)
        with translated():
            return [from_keyed(Article, d) for d in await cursor.to_list()]

    def iter_articles(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[Article]]:
        return keyset_pages(query, batch_size, self._article_page, lambda a: (getattr(a, query.sort_field), a.id))

    @guarded
    async def count_articles(self, query: ArticleQuery, exact: bool) -> int:
        where = article_query(dataclasses.replace(query, after=None))
        if exact:
            return await self._c("articles").count_documents(where)
        # A planned estimate: count at most 10,000 matches (a lower bound), like the SQLite backend.
        return await self._c("articles").count_documents(where, limit=_ESTIMATE_CAP)

    @guarded
    async def get_articles(self, ids: Iterable[str]) -> dict[str, Article]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        cursor = self._c("articles").find({"_id": {"$in": wanted}})
        return {d["_id"]: from_keyed(Article, d) async for d in cursor}

    @guarded
    async def article_refs(self, ids: Iterable[str]) -> dict[str, ArticleRefRow]:
        wanted = list(dict.fromkeys(ids))
        projection = {"title": 1, "url": 1, "source_name": 1, "published_at": 1}
        cursor = self._c("articles").find({"_id": {"$in": wanted}}, projection)
        return {d["_id"]: (d["title"], d["url"], d["source_name"], ms(d["published_at"])) async for d in cursor}

    @guarded
    async def article_sources(self) -> list[tuple[str, str, int, int]]:
        group = {"name": "$source_name", "type": "$source_type", "tier": "$source_tier"}
        pipeline: list[Doc] = [{"$group": {"_id": group, "n": {"$sum": 1}}},
                               {"$sort": {"_id.name": 1, "_id.type": 1, "_id.tier": 1}}]
        rows = await (await self._c("articles").aggregate(pipeline)).to_list()
        return [(r["_id"]["name"], r["_id"]["type"], int(r["_id"]["tier"]), int(r["n"])) for r in rows]
