"""The production path of collection: a real Celery worker runs the per-source task against a local feed
server, stores the enriched articles, then queues the rebuild that refreshes the cached stats."""

from __future__ import annotations

import asyncio

import pytest
import redis
from pytest_httpserver import HTTPServer
from support import wait_for

from store.query import ArticleQuery

pytestmark = [pytest.mark.redis, pytest.mark.slow]  # real Celery workers
SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


async def _articles(stores) -> list:
    await stores.open()
    try:
        return await stores.articles.all_articles(ArticleQuery(limit=10))
    finally:
        await stores.close()


async def test_the_per_source_task_collects_and_rebuilds(worker_env, httpserver: HTTPServer) -> None:
    base = httpserver.url_for("").rstrip("/")
    httpserver.expect_request("/p/1").respond_with_data(
        "<html><body><article><h1>Loader hits hospitals</h1><p>The loader beaconed to its command-and-control "
        f"server and dropped a payload with SHA256 {SHA} on every host.</p></article></body></html>",
        content_type="text/html")
    httpserver.expect_request("/feed").respond_with_data(
        f"<rss version='2.0'><channel><title>F</title><link>{base}</link><description>d</description><item>"
        f"<title>Loader hits hospitals</title><link>{base}/p/1</link><description>d</description></item>"
        "</channel></rss>", content_type="application/rss+xml")
    sources = worker_env.data_dir / "sources.yaml"
    sources.write_text(f"sources:\n- {{name: Local, homepage: '{base}/', feed_url: '{base}/feed'}}\n")
    worker_env.env["CTIWIRE_SOURCES_FILE"] = str(sources)
    worker_env.start_worker()
    worker_env.send("ctiwire.ingest_source", "Local")
    client = redis.Redis.from_url(worker_env.redis.url)
    await asyncio.to_thread(wait_for, lambda: bool(client.keys("ctiwire:stats:pro:*")), 120,
                            "the rebuild after ingestion to cache the stats", worker_env)
    articles = await _articles(worker_env.store())
    assert [a.title for a in articles] == ["Loader hits hospitals"]
    assert ("sha256", SHA) in [(i.type, i.value) for i in articles[0].iocs]
