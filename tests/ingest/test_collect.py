"""Collection over real HTTP against a local feed server: RSS, Atom, broken XML,
304s, 500s, timeouts, huge bodies, redirects, duplicates across feeds and non-UTF-8 pages."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from config.sources import SourceConfig
from ingest.fetch import FetchLimits
from ingest.pipeline import ingest_once
from store.ports import Stores
from store.query import ArticleQuery

HASH = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
LIMITS = FetchLimits(timeout=1.0, max_bytes=200_000, max_redirects=2, retries=1, backoff=0.01)


def _page(title: str, body: str, charset: str = "utf-8") -> bytes:
    html = (f"<html><head><meta charset='{charset}'><title>{title}</title></head><body><article><h1>{title}</h1>"
            + "".join(f"<p>{para}</p>" for para in body.split("\n\n")) + "</article></body></html>")
    return html.encode(charset)


STORY = ("Researchers observed a ransomware intrusion against a regional hospital network in which the operators "
         "deployed a loader before encrypting file servers and demanding payment.\n\n"
         "The loader beaconed to its command-and-control server and staged tools before encryption began. "
         "Incident responders recovered the payload from a compromised workstation.\n\n"
         f"Indicators of compromise: the payload SHA256 {HASH} was seen on every encrypted host.")


def _rss(base: str, items: list[tuple[str, str]]) -> bytes:
    entries = "".join(f"<item><title>{t}</title><link>{base}{p}</link><description>{t} summary</description>"
                      "<pubDate>Mon, 23 Nov 2026 10:00:00 GMT</pubDate></item>" for t, p in items)
    return (f"<?xml version='1.0'?><rss version='2.0'><channel><title>Feed</title><link>{base}</link>"
            f"<description>d</description>{entries}</channel></rss>").encode()


def _atom(base: str, items: list[tuple[str, str]]) -> bytes:
    entries = "".join(f"<entry><title>{t}</title><link href='{base}{p}'/><id>{p}</id>"
                      "<updated>2026-11-22T08:00:00Z</updated><summary>s</summary></entry>" for t, p in items)
    return ("<?xml version='1.0' encoding='utf-8'?><feed xmlns='http://www.w3.org/2005/Atom'><title>A</title>"
            f"<id>urn:a</id><updated>2026-11-22T08:00:00Z</updated>{entries}</feed>").encode()


@pytest.fixture
def feeds(httpserver: HTTPServer) -> Iterator[HTTPServer]:
    base = httpserver.url_for("")
    base = base.rstrip("/")
    pages = {"/p/ransom": _page("Hospital ransomware intrusion", STORY),
             "/p/latin": _page("Caf\u00e9 chain breach", "A payment card skimmer hit the caf\u00e9 chain's "
                               "checkout pages for three weeks before detection by the acquiring bank.", "latin-1"),
             "/p/other": _page("Patch Tuesday roundup", "Microsoft fixed dozens of flaws this month including "
                               "several elevation of privilege bugs in Windows components.")}
    for path, body in pages.items():
        charset = "latin-1" if path == "/p/latin" else "utf-8"
        httpserver.expect_request(path).respond_with_data(body, content_type=f"text/html; charset={charset}")
    httpserver.expect_request("/rss").respond_with_data(
        _rss(base, [("Hospital ransomware intrusion", "/p/ransom"), ("Caf\u00e9 chain breach", "/p/latin")]),
        content_type="application/rss+xml")
    # The same stories again: a tracking parameter on one URL, the same page under another URL.
    httpserver.expect_request("/atom").respond_with_data(
        _atom(base, [("Hospital ransomware intrusion", "/p/ransom?utm_source=x"),
                     ("Patch Tuesday roundup", "/p/other")]), content_type="application/atom+xml")
    httpserver.expect_request("/broken").respond_with_data(b"<rss><channel><item><title>x</ti", content_type="text/xml")
    httpserver.expect_request("/fails").respond_with_data(b"oops", status=500)
    httpserver.expect_request("/huge").respond_with_data(b"<rss>" + b" " * 300_000 + b"</rss>",
                                                         content_type="application/rss+xml")
    httpserver.expect_request("/slow").respond_with_handler(_slow)
    httpserver.expect_request("/moved").respond_with_data(b"", status=301, headers={"Location": base + "/rss"})
    httpserver.expect_request("/loop").respond_with_data(b"", status=302, headers={"Location": base + "/loop"})
    yield httpserver


def _slow(_request: Request) -> Response:
    time.sleep(1.5)
    return Response("<rss/>", content_type="application/rss+xml")


def _source(server: HTTPServer, name: str, path: str) -> SourceConfig:
    return SourceConfig(name, server.url_for("/"), server.url_for(path), "rss", 2, "commercial", True)


async def test_good_feeds_are_collected_and_bad_ones_recorded(feeds: HTTPServer, stores: Stores) -> None:
    sources = [_source(feeds, name, path) for name, path in (
        ("RSS", "/rss"), ("Atom", "/atom"), ("Broken", "/broken"), ("Fails", "/fails"), ("Huge", "/huge"),
        ("Slow", "/slow"), ("Loop", "/loop"))]
    report = await ingest_once(stores, sources, limits=LIMITS)
    articles = await stores.articles.all_articles(ArticleQuery(limit=100))
    assert sorted(a.title for a in articles) == ["Caf\u00e9 chain breach", "Hospital ransomware intrusion",
                                                  "Patch Tuesday roundup"]
    assert set(report.failed) == {"Broken", "Fails", "Huge", "Slow", "Loop"}
    health = {s.name: s for s in await stores.sources.list_sources()}
    assert "500" in (health["Fails"].last_error or "") and "cap" in (health["Huge"].last_error or "")
    assert "timed out" in (health["Slow"].last_error or "") and "redirect" in (health["Loop"].last_error or "")
    assert health["RSS"].last_success_at is not None and health["RSS"].last_error is None
    assert health["RSS"].items_seen == 2
    latin = next(a for a in articles if a.title.startswith("Caf"))
    assert "caf\u00e9 chain's" in latin.content


async def test_enrichment_reaches_the_records(feeds: HTTPServer, stores: Stores) -> None:
    await ingest_once(stores, [_source(feeds, "RSS", "/rss")], limits=LIMITS)
    ransom = next(a for a in await stores.articles.all_articles(ArticleQuery(limit=10)) if "ransomware" in a.title)
    assert ("sha256", HASH) in [(i.type, i.value) for i in ransom.iocs]
    assert ransom.category and ransom.category_legacy and ransom.summary and 0 <= ransom.severity_score <= 10
    record = await stores.iocs.get_ioc("sha256", HASH)
    assert record is not None and record.article_ids == [ransom.id] and record.feed_name == "RSS"


async def test_a_second_run_changes_nothing(feeds: HTTPServer, stores: Stores) -> None:
    sources = [_source(feeds, "RSS", "/rss"), _source(feeds, "Atom", "/atom"), _source(feeds, "Moved", "/moved")]
    first = await ingest_once(stores, sources, limits=LIMITS)
    version = await stores.iocs.data_version()
    second = await ingest_once(stores, sources, limits=LIMITS)
    assert first.articles_new == 3 and second.articles_changed == 0
    assert await stores.iocs.data_version() == version


async def test_conditional_requests_use_the_validators(httpserver: HTTPServer, stores: Stores) -> None:
    base = httpserver.url_for("").rstrip("/")
    httpserver.expect_request("/p/one").respond_with_data(_page("One", STORY), content_type="text/html")
    httpserver.expect_request("/feed", headers={"If-None-Match": '"v1"'}).respond_with_data(b"", status=304)
    httpserver.expect_request("/feed").respond_with_data(_rss(base, [("One", "/p/one")]),
                                                         headers={"ETag": '"v1"'}, content_type="application/rss+xml")
    source = _source(httpserver, "Cond", "/feed")
    first = await ingest_once(stores, [source], limits=LIMITS)
    second = await ingest_once(stores, [source], limits=LIMITS)
    assert (first.items_seen, second.items_seen) == (1, 0) and not second.failed
    held = (await stores.sources.list_sources())[0]
    assert held.etag == '"v1"' and held.last_success_at is not None


async def test_a_changed_page_updates_the_article(httpserver: HTTPServer, stores: Stores) -> None:
    base = httpserver.url_for("").rstrip("/")
    httpserver.expect_request("/feed").respond_with_data(_rss(base, [("Story", "/p/s")]),
                                                         content_type="application/rss+xml")
    httpserver.expect_oneshot_request("/p/s").respond_with_data(_page("Story", STORY), content_type="text/html")
    httpserver.expect_request("/p/s").respond_with_data(_page("Story", STORY + "\n\nUpdate: patched now."),
                                                        content_type="text/html")
    source = _source(httpserver, "Changing", "/feed")
    await ingest_once(stores, [source], limits=LIMITS)
    before = (await stores.articles.all_articles(ArticleQuery()))[0]
    report = await ingest_once(stores, [source], limits=LIMITS)
    after = (await stores.articles.all_articles(ArticleQuery()))[0]
    assert report.articles_updated == 1 and after.id == before.id
    assert after.modified_at >= before.modified_at and "patched now" in after.content
    assert after.fetched_at == before.fetched_at


async def test_an_unknown_source_name_is_refused(feeds: HTTPServer, stores: Stores) -> None:
    with pytest.raises(ValueError, match="no source named"):
        await ingest_once(stores, [_source(feeds, "RSS", "/rss")], only="Nope", limits=LIMITS)


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("mongomock", marks=pytest.mark.mongo)])
async def test_collect_enrich_store_and_serve(feeds: HTTPServer, tmp_path: Path, backend: str) -> None:
    from mongo_support import backend_stores
    from support import make_settings, start_server, stop_server

    server = await start_server(make_settings(tmp_path), backend_stores(backend))
    try:
        await ingest_once(server.ctx.stores, [_source(feeds, "RSS", "/rss"), _source(feeds, "Fails", "/fails")],
                          limits=LIMITS)
        async with server.client(server.pro_key) as http:
            listed = (await http.get("/api/v1/articles", params={"source": "RSS"})).json()["data"]
            found = (await http.get("/api/v1/iocs/search", params={"q": HASH})).json()["data"]
            sources = {s["name"]: s for s in (await http.get("/api/v1/sources")).json()["data"]}
    finally:
        await stop_server(server)
    ransom = next(row for row in listed if "ransomware" in row["title"])
    assert len(listed) == 2 and ransom["has_iocs"] and ransom["category"] and ransom["severity_label"]
    assert [row["value"] for row in found] == [HASH] and found[0]["article_ids"] == [ransom["id"]]
    assert sources["RSS"]["health"]["last_success_at"] and sources["RSS"]["article_count"] == 2
    assert "500" in sources["Fails"]["health"]["last_error"]


async def test_one_failing_article_never_stops_its_source(httpserver: HTTPServer, stores: Stores,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """An extractor failing on one article leaves that article's fields empty; a page the extractor cannot
    read skips its article; the others are stored and the source's health counts both."""
    from ingest import pipeline as collection
    from ingest.enrich import pipeline as enrichment

    real_actors, real_page = enrichment.extract_actors, collection.extract_page

    def actors(text: str) -> list[str]:
        if "Poisoned" in text:
            raise RuntimeError("actor table broken")
        return real_actors(text)

    def page(body: bytes, content_type: str, url: str) -> object:
        if url.endswith("/p/unreadable"):
            raise RuntimeError("parser defect")
        return real_page(body, content_type, url)

    monkeypatch.setattr(enrichment, "extract_actors", actors)
    monkeypatch.setattr(collection, "extract_page", page)
    base = httpserver.url_for("").rstrip("/")
    items = [("Poisoned ransomware story", "/p/poisoned"), ("Unreadable", "/p/unreadable"), ("One", "/p/one")]
    for title, path in items:
        httpserver.expect_request(path).respond_with_data(_page(title, STORY), content_type="text/html")
    httpserver.expect_request("/feed").respond_with_data(_rss(base, items), content_type="application/rss+xml")
    report = await ingest_once(stores, [_source(httpserver, "Local", "/feed")], limits=LIMITS)
    stored = {a.title: a for a in await stores.articles.all_articles(ArticleQuery(limit=10))}
    assert sorted(stored) == ["One", "Poisoned ransomware story"] and not report.failed
    assert stored["Poisoned ransomware story"].threat_actors == [] and stored["Poisoned ransomware story"].iocs
    assert report.failed_articles == {"Local": 2}
    health = (await stores.sources.list_sources())[0]
    assert health.failed_articles == 2 and health.last_error is None and health.items_seen == 3


async def test_character_references_to_no_character_never_stop_a_run(httpserver: HTTPServer, stores: Stores) -> None:
    """A feed item whose title or summary refers to no Unicode character (a surrogate, a number past U+10FFFF)
    made feedparser raise for the whole feed: such a reference reads as U+FFFD, as HTML parsers read it."""
    base = httpserver.url_for("").rstrip("/")
    items = [("Loader &#xD800; campaign", "/p/a"), ("Stealer &#x110000; wave", "/p/b"),
             ("Botnet &#99999999999; report", "/p/c"), ("Plain story", "/p/d")]
    for _title, path in items:
        httpserver.expect_request(path).respond_with_data(b"", status=404)
    feed = _rss(base, items).replace(b"Plain story summary", b"C2 at 45.77.12.9 &#xDFFF;")
    httpserver.expect_request("/feed").respond_with_data(feed, content_type="application/rss+xml")
    report = await ingest_once(stores, [_source(httpserver, "Odd", "/feed")], limits=LIMITS)
    stored = sorted(a.title for a in await stores.articles.all_articles(ArticleQuery(limit=10)))
    assert not report.failed and report.items_seen == 4
    assert stored == ["Botnet \ufffd report", "Loader \ufffd campaign", "Plain story", "Stealer \ufffd wave"]


async def test_a_feed_parser_defect_fails_that_source_alone(httpserver: HTTPServer, stores: Stores,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import feedparser

    real = feedparser.parse

    def parse(body: bytes, **options: object) -> object:
        if b"Cursed" in body:
            raise OverflowError("Python int too large to convert to C int")
        return real(body, **options)

    monkeypatch.setattr(feedparser, "parse", parse)
    base = httpserver.url_for("").rstrip("/")
    httpserver.expect_request("/p/a").respond_with_data(b"", status=404)
    httpserver.expect_request("/cursed").respond_with_data(_rss(base, [("Cursed", "/p/a")]))
    httpserver.expect_request("/plain").respond_with_data(_rss(base, [("Plain", "/p/a")]))
    sources = [_source(httpserver, "Cursed", "/cursed"), _source(httpserver, "Plain", "/plain")]
    report = await ingest_once(stores, sources, limits=LIMITS)
    assert [a.title for a in await stores.articles.all_articles(ArticleQuery(limit=10))] == ["Plain"]
    assert list(report.failed) == ["Cursed"] and "OverflowError" in report.failed["Cursed"]
