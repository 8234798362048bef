"""Records <-> MongoDB documents, on top of the shared codec (``store.codec``).

Each record's natural key becomes ``_id`` (article, user and key ids; source names; ``type:value`` of an
IOC) so lookups and upserts need no second unique index. Articles also carry the derived flags the
filters use (``has_iocs``, ``has_audio``, ``has_ai_summary``), IOCs their STIX id (``stix_id``);
``from_doc`` ignores them on the way back.
"""

from __future__ import annotations

from typing import Any, TypeVar

from store.codec import from_doc, to_doc
from store.records import ApiKey, Article, Ioc, Session, Source, User
from store.value_search import trigrams

Doc = dict[str, Any]
K = TypeVar("K", Article, User, ApiKey, Session)


def ioc_key(ioc_type: str, value: str) -> str:
    """``_id`` of an IOC record: a type never contains ``:``, so the split is unambiguous."""
    return f"{ioc_type}:{value}"


def article_doc(article: Article) -> Doc:
    doc = to_doc(article)
    doc["_id"] = doc.pop("id")
    doc["has_iocs"] = article.has_iocs
    doc["has_audio"] = article.has_audio
    doc["has_ai_summary"] = article.has_ai_summary
    return doc


def keyed_doc(record: User | ApiKey | Session) -> Doc:
    """A user, key or session document: ``id`` stored as ``_id``."""
    doc = to_doc(record)
    doc["_id"] = doc.pop("id")
    return doc


def from_keyed(kind: type[K], doc: Doc) -> K:
    """Rebuild an article, user or key whose id is ``_id``."""
    return from_doc(kind, {**doc, "id": doc["_id"]})


LISTED = "warninglisted"


def ioc_doc(ioc: Ioc, version: str) -> Doc:
    """An IOC document; ``_v`` changes on every write, for compare-and-swap merges. ``stix_id`` is the
    record's STIX object id, indexed for TAXII ``match[id]`` and the object endpoints; ``grams`` the value's
    trigrams, indexed for substring searches."""
    doc = {
        "_id": ioc_key(ioc.type, ioc.value),
        **to_doc(ioc),
        "stix_id": ioc.stix_id,
        "_v": version,
        "valid_until": ioc.valid_until,
    }  # derived (store.decay), stored for the lifecycle filters
    # As [ref, seen] pairs: technique ids such as T1059.001 hold a dot, which field names may not.
    doc["link_seen"] = [[ref, seen] for ref, seen in ioc.link_seen.items()]
    doc["grams"] = trigrams(ioc.value)  # the substring search's index (store.value_search)
    if ioc.warninglisted:
        doc[LISTED] = True  # absent on the others, older documents included (store.mongo.queries.LISTED_OUT)
    return doc


def source_doc(source: Source) -> Doc:
    return {"_id": source.name, **to_doc(source)}


def from_ioc(doc: Doc) -> Ioc:
    return from_doc(Ioc, {**doc, "link_seen": {ref: seen for ref, seen in doc.get("link_seen", [])}})


def from_source(doc: Doc) -> Source:
    return from_doc(Source, doc)
