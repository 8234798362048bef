"""Collection: fetch -> parse -> de-duplicate -> extract page -> enrich -> upsert (ARCHITECTURE.md, "Ingestion").

Idempotent: an article's id is a UUIDv5 of its canonical URL and a story is skipped when its content
hash is already stored, so re-running a feed (or two workers running it at once) changes nothing
that did not change. A failing source records its error in its health and never stops the others.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from config.sources import SourceConfig
from ingest.aggregate import aggregate
from ingest.enrich import Enrichment, enrich
from ingest.feeds import FeedError, FeedItem, canonical_url, content_hash, extract_page, parse_feed
from ingest.fetch import Fetcher, FetchError, FetchLimits
from ingest.stix_context import context_facts
from store.base import StoreError
from store.events import publish_changes
from store.ports import Stores
from store.records import LEGACY_CATEGORIES, Article, Source, utcnow
from telemetry import metrics

ARTICLE_NAMESPACE = uuid.UUID("5d0c2f4e-7a43-5b8e-a1f6-3e9b7c2d4a10")
MAX_ITEMS_PER_SOURCE = 50
SOURCE_CONCURRENCY = 8
Progress = Callable[[str, int], None]
log = logging.getLogger(__name__)


@dataclass
class IngestReport:
    """What one run did (``articles_changed`` drives the rebuild of exports and stats)."""

    sources: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    items_seen: int = 0
    articles_new: int = 0
    articles_updated: int = 0
    ioc_records: int = 0
    failed_articles: dict[str, int] = field(default_factory=dict)  # by source: skipped or partly enriched

    @property
    def articles_changed(self) -> int:
        return self.articles_new + self.articles_updated


class SourceRun:
    """Collects one source in one run."""

    def __init__(self, stores: Stores, fetcher: Fetcher, config: SourceConfig, record: Source, now: datetime,
                 claimed: set[str]) -> None:
        self.stores, self.fetcher, self.config, self.record, self.now = stores, fetcher, config, record, now
        self.claimed = claimed  # content hashes taken by this run's other items and sources
        self.new: list[Article] = []
        self.updated: list[Article] = []
        self.failed = 0  # articles skipped, or stored with an extractor's fields empty

    async def run(self) -> int:
        """Fetch and process the feed; returns items seen. Raises FetchError or FeedError."""
        feed = await self.fetcher.get(self.config.feed_url, self.record.etag, self.record.last_modified)
        self.record.etag, self.record.last_modified = feed.etag, feed.last_modified
        if feed.not_modified:
            return 0
        items = parse_feed(feed.body, self.config.feed_url)[:MAX_ITEMS_PER_SOURCE]
        for item in items:
            try:
                await self._item(item)
            except StoreError:
                raise
            except Exception as exc:  # one article's defect (a page the extractor cannot read) skips it alone
                self.failed += 1
                log.warning("source %s: article %s skipped: %s: %s", self.config.name, item.link,
                            type(exc).__name__, str(exc)[:200])
                log.debug("article %s skipped", item.link, exc_info=True)
        return len(items)

    async def _item(self, item: FeedItem) -> None:
        url = canonical_url(item.link)
        held = await self.stores.articles.find_article(canonical_url=url)
        text, image = await self._text(item)
        digest = content_hash(item.title, text)
        if held is not None and held.content_hash == digest:
            return  # unchanged: nothing to write
        if held is None and (digest in self.claimed or await self.stores.articles.find_article(content_hash=digest)):
            return  # the same story already came from another feed or URL
        self.claimed.add(digest)
        article = self._article(item, url, text, image, digest, held)
        (self.new if held is None else self.updated).append(article)

    async def _text(self, item: FeedItem) -> tuple[str, str | None]:
        """The page's main text, or the feed summary when the page cannot be fetched or read."""
        try:
            page = await self.fetcher.get(item.link)
            extracted = extract_page(page.body, page.content_type, page.url)
        except FetchError:
            extracted = None
        if extracted is None:
            return item.summary, item.image_url
        return extracted.text, extracted.image_url or item.image_url

    def _article(self, item: FeedItem, url: str, text: str, image: str | None, digest: str,
                 held: Article | None) -> Article:
        article_id = held.id if held is not None else str(uuid.uuid5(ARTICLE_NAMESPACE, url))
        found = enrich(item.title, text, source_name=self.config.name, now=self.now, article_id=article_id)
        self.failed += bool(found.errors)
        published = min(item.published or self.now, self.now)
        first = held.fetched_at if held is not None else self.now
        return Article(
            id=article_id, title=item.title,
            url=item.link, canonical_url=url, summary=found.summary or item.summary, published_at=published,
            fetched_at=first, modified_at=self.now, created_at=held.created_at if held is not None else self.now,
            source_name=self.config.name, source_type=self.config.source_type, source_tier=self.config.source_tier,
            image_url=image, content=text, content_hash=digest, **enriched_fields(found),
        )


def enriched_fields(found: Enrichment) -> dict[str, Any]:
    """The article fields an enrichment fills (collection and ``ctiwire enrich --reprocess`` alike)."""
    return dict(
        category=found.category, category_legacy=LEGACY_CATEGORIES.get(found.category, ""),
        content_type=found.content_type, severity_score=found.severity_score,
        severity_reasons=list(found.severity_reasons), ai_summary=found.ai_summary or None,
        categorized_by=found.categorized_by, categorized_at=found.categorized_at,
        ai_classification=found.ai_classification,
        ai_classification_confidence=found.ai_classification_confidence, tech_tags=list(found.tech_tags),
        industry_tags=list(found.industry_tags), threat_actors=list(found.threat_actors),
        mitre_techniques=list(found.mitre_techniques), cve_ids=list(found.cve_ids), iocs=list(found.iocs),
        tags=list(found.tags),
    )


async def _collect(stores: Stores, fetcher: Fetcher, config: SourceConfig, held: Source | None,
                   report: IngestReport, claimed: set[str]) -> None:
    now = utcnow()
    record = Source.configured(config, held)
    record.last_attempt_at = now
    run = SourceRun(stores, fetcher, config, record, now, claimed)
    try:
        seen = await run.run()
    except (FetchError, FeedError) as exc:
        record.last_error = str(exc)[:500]
        report.failed[config.name] = record.last_error
        metrics().ingest_failures.labels(config.name).inc()
    else:
        record.last_success_at, record.last_error = now, None
        metrics().ingest_last_success.labels(config.name).set(now.timestamp())
        record.items_seen += seen
        report.items_seen += seen
        await _write(stores, run, config, report)
    if run.failed:
        record.failed_articles += run.failed
        report.failed_articles[config.name] = run.failed
    await stores.sources.upsert_source(record)


async def _write(stores: Stores, run: SourceRun, config: SourceConfig, report: IngestReport) -> None:
    articles = run.new + run.updated
    if not articles:
        return
    records = aggregate(articles, {config.name: config.category})
    # Records first: a run stopped between the two writes leaves the articles unwritten, so the next run
    # writes them (and merges the same records again, which changes nothing). The other order would leave
    # stored articles whose records are missing, and the next run skips unchanged articles.
    await stores.iocs.upsert_iocs(records)
    await stores.articles.upsert_articles(articles)
    await stores.context.put_context(context_facts(articles))  # what TAXII serves around the records
    await publish_changes(stores, articles, records)
    report.articles_new += len(run.new)
    report.articles_updated += len(run.updated)
    report.ioc_records += len(records)


async def ingest_once(stores: Stores, sources: Sequence[SourceConfig], *, only: str | None = None,
                      limits: FetchLimits | None = None, progress: Progress | None = None,
                      fetcher: Fetcher | None = None) -> IngestReport:
    """Collect every enabled source (or only the one named); returns what changed. ``fetcher``: another way
    to the documents than HTTP (``ingest.files`` reads local files)."""
    chosen = [s for s in sources if (s.name == only if only else s.enabled)]
    if only and not chosen:
        raise ValueError(f"no source named {only!r} in the source list")
    held = {s.name: s for s in await stores.sources.list_sources()}
    report = IngestReport(sources=len(chosen))
    gate, claimed = asyncio.Semaphore(SOURCE_CONCURRENCY), set[str]()

    async def one(config: SourceConfig) -> None:
        async with gate:
            await _collect(stores, client, config, held.get(config.name), report, claimed)
        if progress is not None:
            progress(config.name, report.articles_changed)

    async with fetcher or Fetcher(limits or FetchLimits()) as client:
        await asyncio.gather(*(one(config) for config in chosen))
    return report
