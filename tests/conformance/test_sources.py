"""Configured sources and their collection health on every backend."""

from __future__ import annotations

from conformance.factories import at, source

from store.ports import SourceStore, Stores


async def test_sources_are_listed_by_name_with_their_health(sources: SourceStore) -> None:
    beta = source("Beta", source_type="community", source_tier=3, category="community", enabled=False)
    alpha = source("Alpha", last_attempt_at=at(), last_success_at=at(minutes=-5), last_error="timeout",
                   items_seen=12, etag='"v1"', last_modified="Sat, 01 Mar 2025 12:00:00 GMT")
    await sources.upsert_source(beta)
    await sources.upsert_source(alpha)
    assert await sources.list_sources() == [alpha, beta]


async def test_upsert_replaces_by_name_and_leaves_the_data_version(stores: Stores) -> None:
    sources, before = stores.sources, await stores.iocs.data_version()
    await sources.upsert_source(source("Alpha", items_seen=1, last_error="boom"))
    await sources.upsert_source(source("Alpha", items_seen=2))
    [only] = await sources.list_sources()
    assert (only.items_seen, only.last_error) == (2, None)
    assert await stores.iocs.data_version() == before


async def test_no_sources_yet(stores: Stores) -> None:
    assert await stores.sources.list_sources() == []
    assert await stores.articles.article_sources() == []
    assert await stores.articles.data_version() == await stores.iocs.data_version() == 0
