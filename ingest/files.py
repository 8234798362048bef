"""Collection from local files (``ctiwire ingest --file``): a feed or an article page read from disk.

The documents go through the collection pipeline as a feed would (ingest.pipeline), with a fetcher that
reads ``file:`` URLs and nothing else: an item whose page is on the web keeps its feed summary as text,
so a feed can be tried offline. An HTML page is collected as a feed of one item, itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from urllib.parse import unquote, urlsplit

from config.sources import SourceConfig
from ingest.feeds import FeedError, extract_page, parse_feed
from ingest.fetch import Fetched, Fetcher, FetchError, FetchLimits

FEED_SUFFIXES = (".xml", ".rss", ".atom", ".rdf")
PAGE_TYPE = "text/html"


@dataclass
class FileFetcher(Fetcher):
    """Serves ``file:`` URLs from disk (and documents made in memory); any other URL is a FetchError."""

    documents: dict[str, Fetched] = field(default_factory=dict)

    async def __aenter__(self) -> FileFetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def get(self, url: str, etag: str | None = None, last_modified: str | None = None) -> Fetched:
        if url in self.documents:
            return self.documents[url]
        parts = urlsplit(url)
        if parts.scheme != "file":
            raise FetchError(f"offline: {url} is not a local file")
        path = Path(unquote(parts.path))
        try:
            body = path.read_bytes()[: self.limits.max_bytes]
        except OSError as exc:
            raise FetchError(f"cannot read {path}: {exc.strerror}") from exc
        return Fetched(url, 200, body, PAGE_TYPE if path.suffix.lower() in (".html", ".htm") else "")


def is_feed(path: Path, body: bytes) -> bool:
    """A feed by its suffix, else by whether feedparser reads entries from it."""
    if path.suffix.lower() in FEED_SUFFIXES:
        return True
    try:
        return bool(parse_feed(body, path.as_uri()))
    except FeedError:
        return False


def _one_item_feed(path: Path, body: bytes) -> bytes:
    page = extract_page(body, PAGE_TYPE, path.as_uri())
    title = (page.title if page and page.title else path.stem).strip()
    return (
        f"<rss version='2.0'><channel><title>{escape(path.name)}</title><link>{path.as_uri()}</link>"
        f"<description>local file</description><item><title>{escape(title)}</title>"
        f"<link>{escape(path.as_uri())}</link><description></description></item></channel></rss>"
    ).encode()


def file_source(path: Path, source_name: str, fetcher: FileFetcher) -> SourceConfig:
    """The source that collects ``path`` through ``fetcher`` (an HTML page: a feed of one item made for it)."""
    path = path.resolve()
    body = path.read_bytes()
    feed_url = path.as_uri()
    if not is_feed(path, body):
        feed_url += "#feed"
        fetcher.documents[feed_url] = Fetched(feed_url, 200, _one_item_feed(path, body), "application/rss+xml")
    return SourceConfig(name=source_name, homepage=path.parent.as_uri(), feed_url=feed_url)


def file_fetcher() -> FileFetcher:
    return FileFetcher(FetchLimits())
