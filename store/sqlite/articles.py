"""Articles on the SQLite backend: one row per article with its stored list form and CSV line."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any

import orjson

from store.base import ArticleRefRow, ArticleRow, NotFound, keyset_pages
from store.codec import from_doc, to_doc
from store.csvform import csv_line
from store.ports import ArticleStore
from store.query import TIME_FIELDS, ArticleQuery
from store.records import Article, iso, parse_stored
from store.sqlite import queries
from store.sqlite.part import SqlitePart, _json, _tuples

_ARTICLE_COLUMNS = (
    "id", "title", "summary", "ai_summary", "canonical_url", "content_hash", "published_at", "fetched_at",
    "modified_at", "created_at", "source_name", "source_type", "source_tier", "category", "content_type",
    "severity_score", "rank_score", "has_iocs", "has_audio", "is_archived", "submission_type", "tech_tags",
    "industry_tags", "threat_actors", "technique_ids", "doc", "list_json", "csv_line",
)


def _article_row(a: Article) -> tuple[Any, ...]:
    doc, listed = to_doc(a), a.list_form()
    lists = [_json(x) for x in (a.tech_tags, a.industry_tags, a.threat_actors, [t.id for t in a.mitre_techniques])]
    return (
        a.id, a.title, a.summary, a.ai_summary, a.canonical_url, a.content_hash, iso(a.published_at),
        iso(a.fetched_at), iso(a.modified_at), iso(a.created_at), a.source_name, a.source_type, a.source_tier,
        a.category, a.content_type, a.severity_score, a.rank_score, int(a.has_iocs), int(a.has_audio),
        int(a.is_archived), a.submission_type, *lists, _json(doc), orjson.dumps(listed), csv_line(listed),
    )


class SqliteArticles(SqlitePart, ArticleStore):
    """Articles in the ``articles`` table (FTS5 index ``articles_fts``)."""

    async def upsert_articles(self, articles: Sequence[Article]) -> int:
        if not articles:
            return 0
        marks = ", ".join("?" * len(_ARTICLE_COLUMNS))
        updates = ", ".join(f"{c} = excluded.{c}" for c in _ARTICLE_COLUMNS[1:])
        sql = f"INSERT INTO articles ({', '.join(_ARTICLE_COLUMNS)}) VALUES ({marks}) " \
              f"ON CONFLICT (id) DO UPDATE SET {updates} WHERE doc IS NOT excluded.doc"
        rows = [_article_row(a) for a in articles]

        def upsert(db: sqlite3.Connection) -> int:
            return sum(db.execute(sql, row).rowcount for row in rows)

        return await self._run(lambda db: self._write(db, upsert, bump=True))

    async def get_article(self, article_id: str) -> Article:
        row = await self._one("SELECT doc FROM articles WHERE id = ?",
                                                    (article_id,))
        if row is None:
            raise NotFound(f"no article {article_id!r}")
        return from_doc(Article, orjson.loads(row[0]))

    async def find_article(self, *, canonical_url: str | None = None,
                           content_hash: str | None = None) -> Article | None:
        column, value = ("canonical_url", canonical_url) if canonical_url else ("content_hash", content_hash)
        row = await self._one(f"SELECT doc FROM articles WHERE {column} = ? LIMIT 1",
                                                    (value,))
        return None if row is None else from_doc(Article, orjson.loads(row[0]))

    def _article_page(self, q: ArticleQuery, size: int) -> Callable[[sqlite3.Connection], list[Article]]:
        where, params = queries.article_where(q)
        sql = f"SELECT doc FROM articles WHERE {where} ORDER BY {queries.article_order(q)} LIMIT ? OFFSET ?"

        def fetch(db: sqlite3.Connection) -> list[Article]:
            rows = db.execute(sql, [*params, size, q.offset]).fetchall()
            return [from_doc(Article, orjson.loads(r[0])) for r in rows]

        return fetch

    def _row_page(self, q: ArticleQuery, size: int, column: str = "list_json",
                  encode: Callable[[dict[str, Any]], bytes] = orjson.dumps,
                  ) -> Callable[[sqlite3.Connection], list[ArticleRow]]:
        where, params = queries.article_where(q)
        # The pre-encoded form; the document only for rows written before the column existed.
        sql = (f"SELECT {q.sort_field}, id, {column}, CASE WHEN {column} IS NULL THEN doc END FROM articles "
               f"WHERE {where} ORDER BY {queries.article_order(q)} LIMIT ? OFFSET ?")
        timed = q.sort_field in TIME_FIELDS

        def fetch(db: sqlite3.Connection) -> list[ArticleRow]:
            out: list[ArticleRow] = []
            for value, row_id, encoded, doc in _tuples(db, sql, [*params, size, q.offset]):
                if encoded is None:
                    encoded = encode(from_doc(Article, orjson.loads(doc)).list_form())
                out.append(((parse_stored(value) if timed else value, row_id), encoded))
            return out

        return fetch

    def iter_articles(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[Article]]:
        return keyset_pages(query, batch_size, lambda q, n: self._run(self._article_page(q, n)),
                            lambda a: (getattr(a, query.sort_field), a.id))

    def iter_article_rows(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[ArticleRow]]:
        return keyset_pages(query, batch_size, lambda q, n: self._run(self._row_page(q, n)), lambda row: row[0])

    def iter_article_csv_rows(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[ArticleRow]]:
        return keyset_pages(query, batch_size, lambda q, n: self._run(self._row_page(q, n, "csv_line", csv_line)),
                            lambda row: row[0])

    async def count_articles(self, query: ArticleQuery, exact: bool) -> int:
        where, params = queries.article_where(dataclasses.replace(query, after=None))
        if exact:
            sql = f"SELECT count(*) FROM articles WHERE {where}"
        else:
            # A planned estimate: count at most 10,000 matches, then extrapolate nothing (a lower bound).
            sql = f"SELECT count(*) FROM (SELECT 1 FROM articles WHERE {where} LIMIT 10000)"
        row = await self._one(sql, params)
        return int(row[0])

    async def get_articles(self, ids: Iterable[str]) -> dict[str, Article]:
        rows = await self._rows_in("SELECT id, doc FROM articles WHERE id IN ({marks})", ids)
        return {r[0]: from_doc(Article, orjson.loads(r[1])) for r in rows}

    async def article_refs(self, ids: Iterable[str]) -> dict[str, ArticleRefRow]:
        rows = await self._rows_in(
            "SELECT id, title, json_extract(doc, '$.url'), source_name, published_at FROM articles "
            "WHERE id IN ({marks})", ids)
        return {r[0]: (r[1], r[2], r[3], parse_stored(r[4])) for r in rows}

    async def article_sources(self) -> list[tuple[str, str, int, int]]:
        rows = await self._all(
            "SELECT source_name, source_type, source_tier, count(*) FROM articles "
            "GROUP BY source_name, source_type, source_tier ORDER BY source_name")
        return [(r[0], r[1], int(r[2]), int(r[3])) for r in rows]
