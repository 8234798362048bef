"""Re-enrichment of the stored articles (``ctiwire enrich --reprocess``).

After the enrichment rules change, every stored article is enriched again from its stored title and
text; an article whose enrichment did not change is not written (so a second run writes nothing), and
the IOC records are then recomputed from every article and replace the old ones, so a value that no
article presents any more leaves the API, the exports and TAXII. Idempotent and safe to interrupt:
articles are written in batches, and the records are replaced in one step at the end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from ingest.aggregate import aggregate
from ingest.enrich import enrich
from ingest.pipeline import enriched_fields
from ingest.stix_context import context_facts
from store.codec import merge_ioc
from store.events import publish_changes
from store.ports import Stores
from store.query import ArticleQuery
from store.records import Article, Ioc
from store.sightings import count_onto_records

BATCH = 200
# Fields that record when or how, not what: they differ on every run and say nothing about a change.
_VOLATILE = ("categorized_at", "modified_at")
Progress = Callable[[int], None]


@dataclass
class ReprocessReport:
    articles: int = 0
    changed: int = 0
    ioc_records: int = 0


def every_article() -> ArticleQuery:
    """All stored articles, archived ones too, beyond any tier lookback."""
    return ArticleQuery(include_archived=True, limit=2**62)


def reenriched(article: Article, now: datetime) -> Article:
    """The article with its enrichment recomputed from its stored title and text."""
    found = enrich(article.title, article.content or article.summary or "", source_name=article.source_name, now=now,
                   article_id=article.id)
    return dataclasses.replace(article, summary=found.summary or article.summary, **enriched_fields(found))


def _changed(old: Article, new: Article) -> bool:
    pinned = {name: getattr(old, name) for name in _VOLATILE}
    return dataclasses.replace(new, **pinned) != old


def _fold(records: dict[tuple[str, str], Ioc], batch: list[Ioc]) -> None:
    for record in batch:
        key = (record.type, record.value)
        records[key] = record if key not in records else merge_ioc(records[key], record)


async def reprocess(stores: Stores, categories: Mapping[str, str], now: datetime,
                    progress: Progress | None = None) -> ReprocessReport:
    """Re-enrich every stored article; ``categories`` maps source name -> source category."""
    report = ReprocessReport()
    records: dict[tuple[str, str], Ioc] = {}
    touched: list[Ioc] = []  # the records of changed articles: their events follow the new set
    async for batch in stores.articles.iter_articles(every_article(), BATCH):
        fresh = [reenriched(article, now) for article in batch]
        changed = [dataclasses.replace(new, modified_at=now) for old, new in zip(batch, fresh, strict=True)
                   if _changed(old, new)]
        if changed:
            await stores.articles.upsert_articles(changed)
            await publish_changes(stores, changed, ())
            touched += aggregate(changed, categories)
        kept = {article.id: article for article in changed}
        current = [kept.get(article.id, article) for article in batch]
        _fold(records, aggregate(current, categories))
        # Every article's context: a changed report is a new version, an unchanged one is left alone, and
        # articles stored before the context existed get theirs (store.stix_context).
        await stores.context.put_context(context_facts(current))
        report.articles += len(batch)
        report.changed += len(changed)
        if progress is not None:
            progress(len(batch))
    if report.changed:
        report.ioc_records = await stores.iocs.replace_iocs(records.values())
        # The new records know no reports; the accounts' reports are kept apart and counted again.
        await count_onto_records(stores.iocs, await stores.sightings.tallies(), now)
        await publish_changes(stores, (), touched)
    else:
        report.ioc_records = len(records)
    return report
