"""What is particular to the Mongo backend: the pure query translation (by parameters), documents,
indexes, the factory, and StoreUnavailable when no server answers."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from conformance.factories import BASE, article, at, ioc, mention
from conformance.test_articles_text import INDEXED, ROWS, N
from mongo_support import dispose, mock_store, real_mongodb_uri, real_store
from pymongo import AsyncMongoClient
from support import free_port, make_settings

from store.base import StoreUnavailable
from store.codec import to_doc
from store.factory import make_stores
from store.mongo import MongoArticles, MongoIocs, MongoStore, mongo_stores
from store.mongo.documents import article_doc, ioc_doc
from store.mongo.indexes import RETIRED_INDEXES
from store.mongo.queries import (
    added_arms,
    added_sort,
    and_,
    article_filter,
    article_query,
    article_sort,
    ioc_clauses,
    ioc_filter,
    ioc_hint,
    ioc_sort,
    keyset,
    search_stem,
    search_string,
    text_filter,
)
from store.query import ArticleQuery, IocQuery, TextQuery
from store.records import RECENT_LINKS, utcnow

pytestmark = pytest.mark.mongo


def pattern(value: Any) -> str:
    assert isinstance(value, re.Pattern)
    return value.pattern


@pytest.mark.parametrize(("query", "want"), [
    (ArticleQuery(), {"is_archived": False}),
    (ArticleQuery(include_archived=True), {}),
    (ArticleQuery(include_archived=True, sources=("A", "B"), source_tiers=(1,)),
     {"$and": [{"source_name": {"$in": ["A", "B"]}}, {"source_tier": {"$in": [1]}}]}),
    (ArticleQuery(include_archived=True, has_iocs=False, has_ai_summary=True),
     {"$and": [{"has_iocs": False}, {"has_ai_summary": True}]}),
    (ArticleQuery(include_archived=True, severity_labels=("high", "low")),
     {"$or": [{"severity_score": {"$gte": 7.0, "$lt": 9.0}}, {"severity_score": {"$lt": 4.0}}]}),
    (ArticleQuery(include_archived=True, min_severity=4.5, submission_type="user_submitted"),
     {"$and": [{"submission_type": "user_submitted"}, {"severity_score": {"$gte": 4.5}}]}),
    (ArticleQuery(include_archived=True, mitre_technique="T1059.001"), {"mitre_techniques.id": "T1059.001"}),
    (ArticleQuery(include_archived=True, floor=BASE, time_field="fetched_at", since=at(1), until=at(2)),
     {"$and": [{"published_at": {"$gte": BASE}}, {"fetched_at": {"$gte": at(1), "$lte": at(2)}}]}),
], ids=["default", "archived", "lists", "flags", "buckets", "scalars", "mitre", "times"])
def test_article_filter_by_parameters(query: ArticleQuery, want: dict[str, Any]) -> None:
    assert article_filter(query) == (None, want)
    assert article_query(query) == want


def test_cve_text_is_an_escaped_case_insensitive_substring() -> None:
    _, where = article_filter(ArticleQuery(include_archived=True, cve_text="CVE-2024-1234"))
    assert [pattern(branch[name]) for branch, name in zip(where["$or"], ("title", "ai_summary"), strict=True)] == [
        r"(?i)CVE\-2024\-1234", r"(?i)CVE\-2024\-1234"]


@pytest.mark.parametrize(("sort", "after", "want_sort", "want_keyset"), [
    ("published:desc", (BASE, "id9"), [("published_at", -1), ("_id", -1)],
     {"$or": [{"published_at": {"$lt": BASE}}, {"published_at": BASE, "_id": {"$lt": "id9"}}]}),
    ("published:asc", ("2025-03-01T12:00:00.000Z", "id9"), [("published_at", 1), ("_id", 1)],
     {"$or": [{"published_at": {"$gt": BASE}}, {"published_at": BASE, "_id": {"$gt": "id9"}}]}),
    ("severity:desc", (7.5, "id9"), [("severity_score", -1), ("_id", -1)],
     {"$or": [{"severity_score": {"$lt": 7.5}}, {"severity_score": 7.5, "_id": {"$lt": "id9"}}]}),
    ("engagement:desc", (0.0, "id9"), [("rank_score", -1), ("_id", -1)],
     {"$or": [{"rank_score": {"$lt": 0.0}}, {"rank_score": 0.0, "_id": {"$lt": "id9"}}]}),
])
def test_sort_and_keyset_by_parameters(sort: str, after: tuple[Any, str], want_sort: list[tuple[str, int]],
                                       want_keyset: dict[str, Any]) -> None:
    query = ArticleQuery(sort=sort, after=after, include_archived=True)
    assert article_sort(query) == want_sort
    assert article_query(query) == want_keyset


def test_ioc_filter_by_parameters() -> None:
    query = IocQuery(types=("ipv4",), industries=("energy",), since=BASE, added_after=at(1),
                     after=(at(2), "ipv4", "10.0.0.1"), value_contains="a.b")
    assert ioc_filter(query) == {"$and": [
        {"type": {"$in": ["ipv4"]}}, {"industries": {"$in": ["energy"]}}, {"grams": "a.b"},
        {"value": re.compile(r"a\.b")}, {"warninglisted": {"$ne": True}},
        {"modified": {"$gte": BASE}}, {"$or": [arm for _, arm in added_arms(query)]},
        keyset([("first_seen", at(2)), ("type", "ipv4"), ("value", "10.0.0.1")], False),
    ]}
    # added_after bounds the date_added: the modified, or the valid_until of a record expired after its modified.
    assert [(field, arm["$and"][-1]) for field, arm in added_arms(query)] == [
        ("modified", keyset([("modified", at(1))], False)), ("valid_until", keyset([("valid_until", at(1))], False))]
    assert ioc_filter(IocQuery(types=("ipv4",), include_warninglisted=True)) == {"type": {"$in": ["ipv4"]}}
    assert keyset([("a", 1), ("b", 2), ("c", 3)], False) == {"$or": [
        {"a": {"$gt": 1}}, {"a": 1, "b": {"$gt": 2}}, {"a": 1, "b": 2, "c": {"$gt": 3}}]}
    assert ioc_filter(IocQuery()) == {"warninglisted": {"$ne": True}}
    assert ioc_filter(IocQuery(include_warninglisted=True)) == {}
    assert ioc_filter(IocQuery(value_contains="evil.c", include_warninglisted=True)) == {"$and": [
        {"grams": "evi"}, {"grams": "il."}, {"grams": "l.c"}, {"grams": "vil"}, {"value": re.compile(r"evil\.c")}]}
    assert ioc_filter(IocQuery(value_contains="ev", include_warninglisted=True)) == {
        "value": {"$gte": "ev", "$lt": "ev\U0010ffff"}}
    assert ioc_filter(IocQuery(stix_ids=("indicator--a", "indicator--b"), include_warninglisted=True)) == {
        "stix_id": {"$in": ["indicator--a", "indicator--b"]}}
    assert and_([]) == {}


@pytest.mark.parametrize(("term", "stem"), [
    ("attacks", "attack"), ("Attacked", "attack"), ("exploiting", "exploit"), ("vulnerabilities", "vulnerabilit"),
    ("patches", "patch"), ("ransomware", "ransomware"), ("uses", "use"), ("bus", "bus"), ("ring", "ring"),
])
def test_search_stem_is_a_prefix_of_the_term(term: str, stem: str) -> None:
    assert search_stem(term) == stem
    assert term.lower().startswith(stem)


def test_default_text_query_uses_the_text_index_and_requires_every_term() -> None:
    search, clauses = text_filter(TextQuery(terms=("Ransomware", '"attacks'), excluded=("-phishing",)))
    assert search == {"$search": "Ransomware attacks -phishing"}
    assert [[pattern(b[f]) for b, f in zip(c["$or"], ("title", "summary"), strict=True)] for c in clauses] == [
        [r"(?i)\bransomware"] * 2, [r"(?i)\battack"] * 2]
    assert search_string(TextQuery(terms=("a b",), excluded=('"',))) == "a b"
    full = article_query(ArticleQuery(text=TextQuery(terms=("x",)), include_archived=True))
    assert set(full) == {"$text", "$and"} and full["$text"] == {"$search": "x"}


def test_scanned_fields_use_word_prefix_regexes() -> None:
    search, clauses = text_filter(TextQuery(terms=("ransom",), excluded=("old",), field="ai_summary"))
    assert search is None
    assert pattern(clauses[0]["ai_summary"]) == r"(?i)\bransom"
    assert pattern(clauses[1]["ai_summary"]["$not"]) == r"(?i)\bold"


MONGO_KINDS = ["mongomock", *(["mongodb"] if real_mongodb_uri() else [])]


@pytest.fixture(params=MONGO_KINDS)
async def mongo(request: pytest.FixtureRequest) -> AsyncIterator[MongoStore]:
    store = mock_store() if request.param == "mongomock" else real_store(real_mongodb_uri() or "")
    await store.open()
    yield store
    await dispose(store)


@pytest.mark.parametrize(("name", "terms", "excluded", "want"), [c for c in INDEXED if not c[2]],
                         ids=[c[0] for c in INDEXED if not c[2]])
async def test_the_regex_half_of_a_text_query_requires_every_stem(mongo: MongoStore, name: str,
                                                                  terms: tuple[str, ...], excluded: tuple[str, ...],
                                                                  want: set[int]) -> None:
    """Without ``$text`` (mongomock), the per-term clauses alone already give the indexed results."""
    await MongoArticles(mongo).upsert_articles(ROWS)
    _, clauses = text_filter(TextQuery(terms=terms))
    collection: Any = mongo.db["articles"]
    found = await collection.find(and_([*clauses, {"is_archived": False}])).to_list()
    assert {N[d["_id"]] for d in found} == want


def test_documents_key_records_naturally_and_carry_derived_flags() -> None:
    doc = article_doc(article(1, iocs=[mention("x.example")], ai_summary="", audio_url="https://a.example/1"))
    assert doc["_id"] == article(1).id and "id" not in doc
    assert (doc["has_iocs"], doc["has_ai_summary"], doc["has_audio"]) == (True, False, True)
    assert ioc_doc(ioc("x.example"), "v1")["_id"] == "domain:x.example"
    assert ioc_doc(ioc("CVE-2024-1", "cve"), "v1")["stix_id"] == ioc("CVE-2024-1", "cve").stix_id


async def test_open_creates_the_indexes(mongo: MongoStore) -> None:
    def names(collection: str) -> Any:
        handle: Any = mongo.db[collection]  # AsyncCollection, or the mock adapter
        return handle.index_information()

    articles = await names("articles")
    assert "articles_text" in articles
    assert {"published_at_1__id_1", "rank_score_1__id_1", "severity_score_1__id_1"} <= set(articles)
    assert (await names("users"))["email_1"]["unique"]
    keys = await names("api_keys")
    assert keys["key_hash_1"]["unique"] and keys["user_id_1_name_1"]["unique"]
    assert "stix_id_1" in await names("iocs")  # TAXII match[id] and object lookups
    await mongo.open()  # idempotent


async def test_open_drops_the_indexes_their_successors_replaced(mongo: MongoStore) -> None:
    """A database an earlier release opened keeps ``modified_1``, ``type_1_modified_1`` and ``valid_until_1``
    until the next open drops them; the compound indexes that replaced them stay."""
    handle: Any = mongo.db["iocs"]  # AsyncCollection, or the mock adapter
    for keys in (["modified"], ["type", "modified"], ["valid_until"]):
        await handle.create_index([(k, 1) for k in keys])
    assert {name for _, name in RETIRED_INDEXES} <= set(await handle.index_information())
    await mongo.open()
    names = set(await handle.index_information())
    assert not {name for _, name in RETIRED_INDEXES} & names
    assert {"modified_1_type_1_value_1", "type_1_modified_1_value_1", "valid_until_1_type_1_value_1"} <= names


async def test_unreachable_server_is_store_unavailable() -> None:
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
        f"mongodb://127.0.0.1:{free_port()}", tz_aware=True, serverSelectionTimeoutMS=50, connect=False)
    stores = mongo_stores(client, "ctiwire_unreachable")
    try:
        calls = (stores.ping, lambda: stores.iocs.upsert_iocs([ioc("x")]))
        for call in calls:
            with pytest.raises(StoreUnavailable):
                await call()
        with pytest.raises(StoreUnavailable):
            await stores.articles.all_articles(ArticleQuery())
    finally:
        await stores.close()


async def test_factory_builds_a_mongo_store_from_settings(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, mongodb_uri="mongodb://127.0.0.1:1", mongodb_db="ctiwire_x")
    stores = make_stores(settings)
    store = stores.lifecycle
    assert isinstance(store, MongoStore) and store.db_name == "ctiwire_x" and stores.name == "mongodb"
    await stores.close()


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


def _stages(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Every stage of an explain() winning plan, outermost first."""
    children = [plan["inputStage"]] if "inputStage" in plan else plan.get("inputStages", [])
    return [plan, *(s for child in children for s in _stages(child))]


async def test_ioc_pages_and_totals_have_compound_indexes_the_planner_uses(mongo: MongoStore) -> None:
    handle: Any = mongo.db["iocs"]  # AsyncCollection, or the mock adapter
    assert {"type_1_first_seen_1_value_1", "type_1_modified_1_value_1", "modified_1_type_1_value_1",
            "valid_until_1_type_1_value_1", "type_1_valid_until_1_value_1"} <= set(await handle.index_information())
    assert "k_1_b_1" in await mongo.db["ioc_counters"].index_information()  # type: ignore[operator]
    if not isinstance(mongo.client, AsyncMongoClient):
        return  # mongomock has no query planner: explain() runs on a real server only
    await MongoIocs(mongo).upsert_iocs([ioc(f"d{n}.example", ("domain", "ipv4")[n % 2]) for n in range(50)])
    query = IocQuery(types=("domain",), since=at(days=-365), limit=100)
    hint = ioc_hint(query, utcnow())
    assert hint == [("type", 1), ("first_seen", 1), ("value", 1)]  # the index's own keys
    explained = await handle.find(ioc_filter(query)).sort(ioc_sort(query)).hint(hint).limit(100).explain()
    stages = _stages(explained["queryPlanner"]["winningPlan"])
    assert "SORT" not in {s["stage"] for s in stages}
    assert any(s.get("indexName") == "type_1_first_seen_1_value_1" for s in stages), stages


@pytest.mark.parametrize("types", [(), ("domain",), ("domain", "ipv4")])
async def test_taxii_pages_walk_a_date_index_per_arm(mongo: MongoStore, types: tuple[str, ...]) -> None:
    """A page in date_added order reads each arm off its (date, type, value) index, or (type, date, value) for one
    type, from the position: no sort stage, whatever the collection's size (as SQLite's merged walks)."""
    handle: Any = mongo.db["iocs"]
    query = IocQuery(types=types, added_order=True, now=utcnow(), added_after=at(days=-365),
                     after=(at(days=-1), "domain", "d7.example"), limit=100)
    arms = added_arms(query)
    assert [field for field, _ in arms] == ["modified", "valid_until"]
    if not isinstance(mongo.client, AsyncMongoClient):
        return  # mongomock has no query planner: explain() runs on a real server only
    await MongoIocs(mongo).upsert_iocs([ioc(f"d{n}.example", ("domain", "ipv4")[n % 2]) for n in range(50)])
    for field, arm in arms:
        order = added_sort(query, field)
        cursor = handle.find(and_([*ioc_clauses(query), arm])).sort(order).hint(order).limit(100)
        stages = _stages((await cursor.explain())["queryPlanner"]["winningPlan"])
        assert "SORT" not in {s["stage"] for s in stages}, stages
        assert any(s.get("indexName") == "_".join(f"{k}_1" for k, _ in order) for s in stages), stages
