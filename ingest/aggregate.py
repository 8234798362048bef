"""Articles -> IOC records: one record per (type, value), aggregated over the articles that mention it.

The store merges a batch into what it holds (``store.codec.merge_ioc``), so this
module only folds one batch; the confidence rule lives with the merge because it depends on every
report the store knows of, not only on this batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from store.codec import merge_ioc, merged_confidence
from store.indicators import detect_type, normalize
from store.records import Article, ArticleIoc, Ioc
from store.warninglists import warninglists


def ioc_record(article: Article, mention: ArticleIoc, source_category: str) -> Ioc:
    """The record one article's mention contributes; first seen when the article was first stored."""
    record = Ioc(
        type=mention.type, value=mention.value, confidence=mention.confidence,
        feed_name=article.source_name, source_category=source_category,
        first_seen=article.fetched_at, last_seen=max(article.published_at, article.fetched_at),
        modified=article.modified_at, sources=[article.source_name], industries=list(article.industry_tags),
        article_ids=[article.id], cves=[c for c in article.cve_ids if c != mention.value],
        techniques=[t.id for t in article.mitre_techniques], threat_actors=list(article.threat_actors),
        severity=article.severity_score,
        warninglists=warninglists().names(mention.type, mention.value),
    )
    return replace(record, confidence=merged_confidence(record, record, 1))


def technique_mentions(article: Article) -> list[ArticleIoc]:
    """The article's ATT&CK techniques as ``mitre-attack`` mentions (spec, IOC type ``mitre-attack``): records
    like the others, aggregated over every article that describes the technique."""
    return [ArticleIoc("mitre-attack", normalize("mitre-attack", t.id), t.confidence if t.confidence in
                       ("high", "medium", "low") else "medium")
            for t in article.mitre_techniques if detect_type(t.id) == "mitre-attack"]


def aggregate(articles: Iterable[Article], categories: Mapping[str, str]) -> list[Ioc]:
    """Fold every mention of ``articles`` into records; ``categories`` maps source name -> category."""
    records: dict[tuple[str, str], Ioc] = {}
    for article in articles:
        category = categories.get(article.source_name, "commercial")
        for mention in (*article.iocs, *technique_mentions(article)):
            record = ioc_record(article, mention, category)
            key = (record.type, record.value)
            held = records.get(key)
            records[key] = record if held is None else merge_ioc(held, record)
    return list(records.values())
