"""Indicators looked up: the enrichment GET and POST /api/v1/lookup answer and the web's /search page shows.

Pure of HTTP: the API turns :class:`IndicatorError` into a 400 naming its parameter (or, in a bulk
lookup, an ``invalid`` result with the reason), the web into a message under the search box. All of them
read the same store records within the caller's window (:class:`LookupWindow`), the same related articles
(inside the tier's article lookback, as ``/articles/{id}`` serves them) and build the same payload, one
value or a thousand: records are read in a query per type (the store chunks long lists), articles in one.

A record outside the caller's IOC lookback answers exactly as a value never stored (``found`` false):
``/iocs/search`` hides it from the same caller, so a lookup does not reveal it either.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from exporters.lookup_risk import hunting_queries, risk_score
from store.attack import loaded_catalogue
from store.indicators import detect_type, normalize, refang
from store.ioctypes import REGISTRY
from store.ports import IocStore, Stores
from store.records import Article, Ioc, iso
from store.warninglists import warninglists

RELATED_ARTICLES_MAX = 20
# A bulk lookup's value longer than this is no indicator (the longest URLs browsers keep are ~2,000).
MAX_VALUE_CHARS = 2048
Indicator = tuple[str, str]  # (type, normalised value)
Answer = dict[str, Any]


class IndicatorError(ValueError):
    """A typed value that is not an indicator (or not of the type asked for); the message says which."""


@dataclass(frozen=True, slots=True)
class LookupWindow:
    """What one caller may see (spec, Limits): records modified at or after ``iocs`` (the IOC lookback, as
    ``/iocs/search`` applies it) and articles published at or after ``articles`` (the article lookback)."""

    iocs: datetime
    articles: datetime


def read_indicator(raw: str, given_type: str | None = None) -> Indicator:
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


def read_exact(raw: str, given_type: str | None = None) -> Indicator:
    """A whole value (not part of one, as ``read_indicator`` takes for a search), read as the bulk lookup reads
    it; with ``given_type``, the type it is read as must be that one."""
    found = read_value(raw)
    if isinstance(found, str):
        raise IndicatorError(found)
    if given_type is not None and found[0] != given_type:
        raise IndicatorError(f"is a {found[0]} value, not a {given_type} value")
    return found


def read_value(raw: str) -> Indicator | str:
    """The indicator of one value of a list (a bulk lookup, sightings), or the reason it is none."""
    if len(raw) > MAX_VALUE_CHARS:
        return f"is longer than {MAX_VALUE_CHARS:,} characters"
    try:
        return read_indicator(raw)
    except IndicatorError as exc:
        return str(exc)


def listed_on(ioc_type: str, value: str) -> Answer:
    """The warninglists the value is on as this process's lists say (what the next recheck stores), stored or
    not: a known-benign value is worth knowing before anyone blocks it."""
    lists = warninglists()
    names = lists.names(ioc_type, value)
    return {"warninglisted": bool(names), "warninglists": lists.describe(names)}


def unknown_payload(ioc_type: str, value: str) -> Answer:
    """The answer for a value with no record in the caller's window: its hunting queries still help, and so
    do the warninglists it is on ("not in our data; on the list X")."""
    listed = listed_on(ioc_type, value)
    note = ({"note": "not in our data; on the warninglist " + ", ".join(w["name"] for w in listed["warninglists"])}
            if listed["warninglisted"] else {})
    return {"found": False, "type": ioc_type, "value": value, **listed, **note,
            "hunting_queries": hunting_queries(ioc_type, value)}


def found_payload(ioc: Ioc, articles: list[Article], names: dict[str, str], now: datetime) -> Answer:
    """The enrichment of a known indicator (the ``Lookup`` schema of the OpenAPI description); ``names``
    are technique names by id for the techniques the related articles do not name."""
    score, factors = risk_score(ioc, now)
    named = {t.id: t.name for a in articles for t in a.mitre_techniques}
    return {
        "found": True, "type": ioc.type, "value": ioc.value, "stix_id": ioc.stix_id,
        "confidence": ioc.confidence, "first_seen": iso(ioc.first_seen), "last_seen": iso(ioc.last_seen),
        "source": {"feed_name": ioc.feed_name, "category": ioc.source_category},
        "reporting_sources": list(ioc.sources), "industries": list(ioc.industries),
        "related_articles": [{"id": a.id, "title": a.title, "url": a.url, "source_name": a.source_name,
                              "published_at": iso(a.published_at)} for a in articles],
        "cves": list(ioc.cves),
        "mitre_techniques": [{"id": t, "name": named.get(t) or names.get(t, "")} for t in ioc.techniques],
        "threat_actors": list(ioc.threat_actors),
        "sightings": ioc.sightings, "false_positives": ioc.false_positives,
        "risk": {"score": score, "factors": [{"factor": f.factor, "points": f.points} for f in factors]},
        **listed_on(ioc.type, ioc.value),
        "hunting_queries": hunting_queries(ioc.type, ioc.value),
    }


async def visible_records(iocs: IocStore, indicators: Iterable[Indicator], floor: datetime) -> dict[Indicator, Ioc]:
    """The stored records of ``indicators`` modified at or after ``floor``: one batch read per type."""
    by_type: dict[str, list[str]] = defaultdict(list)
    for ioc_type, value in dict.fromkeys(indicators):
        by_type[ioc_type].append(value)
    found = {}
    for ioc_type, values in by_type.items():
        for value, ioc in (await iocs.get_iocs(ioc_type, values)).items():
            if ioc.modified >= floor:
                found[ioc_type, value] = ioc
    return found


def _article_ids(ioc: Ioc) -> list[str]:
    return ioc.article_ids[-RELATED_ARTICLES_MAX:]


def related(ioc: Ioc, articles: dict[str, Article], floor: datetime) -> list[Article]:
    """The articles reporting ``ioc`` published at or after ``floor``, newest first: no title or URL from
    outside the caller's window leaks through a lookup; an article removed since is simply not listed."""
    found = (articles[i] for i in _article_ids(ioc) if i in articles)
    return sorted((a for a in found if a.published_at >= floor), key=lambda a: a.published_at, reverse=True)


async def technique_names(records: Iterable[Ioc]) -> dict[str, str]:
    """Catalogue names of the records' techniques (read only when some record has techniques)."""
    wanted = {t for ioc in records for t in ioc.techniques}
    if not wanted:
        return {}
    catalogue = await loaded_catalogue()
    return {t: catalogue[t][0] for t in wanted if t in catalogue}


async def lookup_many(stores: Stores, indicators: Sequence[Indicator], window: LookupWindow, now: datetime
                      ) -> list[Answer]:
    """The answer for each indicator, in order: found or not, always with its hunting queries."""
    records = await visible_records(stores.iocs, indicators, window.iocs)
    articles = await stores.articles.get_articles(i for ioc in records.values() for i in _article_ids(ioc))
    names = await technique_names(records.values())
    built: dict[Indicator, Answer] = {}
    for key in indicators:
        if key not in built:
            ioc = records.get(key)
            built[key] = (unknown_payload(*key) if ioc is None
                          else found_payload(ioc, related(ioc, articles, window.articles), names, now))
    return [built[key] for key in indicators]


async def lookup(stores: Stores, ioc_type: str, value: str, window: LookupWindow, now: datetime) -> Answer:
    """The whole answer for one normalised indicator (GET /api/v1/lookup, the web's /search)."""
    return (await lookup_many(stores, [(ioc_type, value)], window, now))[0]


async def bulk_lookup(stores: Stores, raws: Sequence[str], window: LookupWindow, now: datetime) -> list[Answer]:
    """POST /api/v1/lookup: each value as sent (``input``) with its ``result``, in order: ``found`` and
    ``not_found`` carry what GET /lookup answers for the value; ``invalid`` carries the ``reason``."""
    read = [read_value(raw) for raw in raws]
    answers = iter(await lookup_many(stores, [r for r in read if isinstance(r, tuple)], window, now))
    results = []
    for raw, item in zip(raws, read, strict=True):
        if isinstance(item, str):
            results.append({"input": raw, "result": "invalid", "reason": item})
            continue
        answer = next(answers)
        results.append({"input": raw, "result": "found" if answer["found"] else "not_found", **answer})
    return results
