"""What is particular to the Mongo backend's IOC side at scale: the link backfill at open, the compound
indexes the IOC pages and searches walk, and (on a real server) the plans that use them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from conformance.factories import ioc
from mongo_support import dispose, mock_store, real_mongodb_uri, real_store

from store.codec import to_doc
from store.mongo import MongoIocs, MongoStore
from store.records import RECENT_LINKS

pytestmark = pytest.mark.mongo
MONGO_KINDS = ["mongomock", *(["mongodb"] if real_mongodb_uri() else [])]


@pytest.fixture(params=MONGO_KINDS)
async def mongo(request: pytest.FixtureRequest) -> AsyncIterator[MongoStore]:
    store = mock_store() if request.param == "mongomock" else real_store(real_mongodb_uri() or "")
    await store.open()
    yield store
    await dispose(store)


async def test_open_moves_the_lists_of_older_documents_into_the_relation(mongo: MongoStore) -> None:
    full = ioc("evil.example", article_ids=[f"a{n:03d}" for n in range(50)], cves=["CVE-2024-1"])
    old = {k: v for k, v in to_doc(full).items() if not k.endswith("_count") and k != "link_seen"}
    await mongo.db["iocs"].insert_one({"_id": "domain:evil.example", **old})  # as an older release wrote it
    await mongo.open()
    iocs = MongoIocs(mongo)
    record = await iocs.get_ioc("domain", "evil.example")
    assert record is not None and (record.article_count, record.cve_count) == (50, 1)
    assert len(record.article_ids) == RECENT_LINKS
    assert len(await iocs.ioc_links("domain", "evil.example", "article", 100)) == 50
    await mongo.open()  # a second open finds nothing to move
    again = await iocs.get_ioc("domain", "evil.example")
    assert again is not None and again.article_count == 50
