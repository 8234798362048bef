"""One indicator looked up: the enrichment GET /api/v1/lookup answers and the web's /search page shows.

Pure of HTTP: the API turns :class:`IndicatorError` into a 400 naming its parameter, the web into a
message under the search box. Both read the same store records, the same related articles (inside the
tier's article lookback, as ``/articles/{id}`` serves them) and build the same payload.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

from exporters.lookup_risk import hunting_queries, risk_score
from store.base import NotFound
from store.indicators import detect_type, normalize, refang
from store.ioctypes import REGISTRY
from store.ports import ArticleStore, Stores
from store.records import Article, Ioc, iso

RELATED_ARTICLES_MAX = 20


class IndicatorError(ValueError):
    """A typed value that is not an indicator (or not of the type asked for); the message says which."""


def read_indicator(raw: str, given_type: str | None = None) -> tuple[str, str]:
    """(type, normalised value) of a user-typed indicator, defanged forms (``hxxp``, ``[.]``) included. With
    ``given_type``, the text must be a value of that type, or part of one for a type searched by substring
    (``IocTypeSpec.accepts_query``)."""
    text = refang(raw.strip())
    ioc_type = given_type or detect_type(text)
    if ioc_type is None:
        raise IndicatorError("is not a recognised indicator (IP, domain, URL, hash, e-mail or CVE)")
    spec = REGISTRY[ioc_type]
    if given_type is not None and not spec.accepts_query(text):  # a detected type holds by definition
        raise IndicatorError(f"is not a valid {spec.label}" + (" or part of one" if spec.part else ""))
    try:
        return ioc_type, normalize(ioc_type, text)
    except ValueError as exc:  # a value that is not of the requested type is the caller's error
        raise IndicatorError(f"is not a valid {ioc_type} value") from exc


async def related_articles(articles: ArticleStore, ioc: Ioc, lookback_days: int, now: datetime) -> list[Article]:
    """The articles reporting ``ioc`` that a tier with ``lookback_days`` may read, newest first: no title
    or URL from outside the window leaks through a lookup."""
    floor = now - timedelta(days=lookback_days)
    found = []
    for article_id in ioc.article_ids[-RELATED_ARTICLES_MAX:]:
        try:
            found.append(await articles.get_article(article_id))
        except NotFound:  # an article removed since is simply not listed
            continue
    return sorted((a for a in found if a.published_at >= floor), key=lambda a: a.published_at, reverse=True)


def found_payload(ioc: Ioc, articles: list[Article], now: datetime) -> dict[str, Any]:
    """The enrichment of a known indicator (the ``Lookup`` schema of the OpenAPI description)."""
    score, factors = risk_score(ioc, now)
    names = {t.id: t.name for a in articles for t in a.mitre_techniques}
    return {
        "found": True, "type": ioc.type, "value": ioc.value, "stix_id": ioc.stix_id,
        "confidence": ioc.confidence, "first_seen": iso(ioc.first_seen), "last_seen": iso(ioc.last_seen),
        "source": {"feed_name": ioc.feed_name, "category": ioc.source_category},
        "reporting_sources": list(ioc.sources), "industries": list(ioc.industries),
        "related_articles": [{"id": a.id, "title": a.title, "url": a.url, "source_name": a.source_name,
                              "published_at": iso(a.published_at)} for a in articles],
        "cves": list(ioc.cves),
        "mitre_techniques": [{"id": t, "name": names.get(t, "")} for t in ioc.techniques],
        "threat_actors": list(ioc.threat_actors),
        "risk": {"score": score, "factors": [asdict(f) for f in factors]},
        "hunting_queries": hunting_queries(ioc.type, ioc.value),
    }


async def lookup(stores: Stores, ioc_type: str, value: str, article_lookback_days: int, now: datetime
                 ) -> dict[str, Any]:
    """The whole answer for one normalised indicator: found or not, always with its hunting queries."""
    ioc = await stores.iocs.get_ioc(ioc_type, value)
    if ioc is None:
        return {"found": False, "type": ioc_type, "value": value, "hunting_queries": hunting_queries(ioc_type, value)}
    return found_payload(ioc, await related_articles(stores.articles, ioc, article_lookback_days, now), now)
