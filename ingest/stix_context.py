"""Articles -> the STIX context facts TAXII serves (store.stix_context), written beside their records.

One ``report`` per article that brought indicators (its objects: each mention's record object and the
article's threat actors), each named actor's ``intrusion-set`` with its galaxy malware families and the state
it is ``attributed-to`` (a ``threat-actor``, when the galaxy names a suspected sponsor), and a
relationship from each mention's object to each actor the article names (STIX 2.1 Appendix B): an
indicator ``indicates`` the intrusion set, the intrusion set ``uses`` an attack pattern and ``targets`` a
vulnerability. A record's actors are the union of its articles' (ingest.aggregate), so the facts of a
batch's articles hold every relationship of the batch's records.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.aggregate import technique_mentions
from store.ioctypes import Stix, mapping, supported
from store.records import Article, ArticleIoc
from store.stix_context import ContextFact, actor_facts, actor_id, relationship, report_fact
from store.stixids import object_id

# The mentions of one article its report names and links to its actors: an article that lists thousands (a
# published blocklist) keeps one report of bounded size; every mention still has its record.
MENTIONS_PER_ARTICLE = 1_000


def _link(mention: ArticleIoc, actor: str) -> ContextFact:
    """The relationship between a mention's object and an actor, in the direction STIX 2.1 names it."""
    target = object_id(mention.type, mention.value)
    kind = mapping(mention.type, "stix", Stix).object_type
    if kind == "indicator":
        return relationship(target, "indicates", actor)
    return relationship(actor, "uses" if kind == "attack-pattern" else "targets", target)


def article_facts(article: Article) -> list[ContextFact]:
    """The facts one article brings; none for an article without indicators."""
    mentions = [m for m in (*article.iocs, *technique_mentions(article)) if supported(m.type, "stix")]
    mentions = mentions[:MENTIONS_PER_ARTICLE]
    if not mentions:
        return []
    actors = list(dict.fromkeys(a.lower() for a in article.threat_actors))
    refs = [object_id(m.type, m.value) for m in mentions] + [actor_id(a) for a in actors]
    found = [report_fact(article.id, article.title, article.url, article.source_name, article.published_at, refs)]
    for canonical in actors:
        found += actor_facts(canonical)
        found += [_link(m, actor_id(canonical)) for m in mentions]
    return found


def context_facts(articles: Iterable[Article]) -> list[ContextFact]:
    """Every fact of ``articles`` (an id twice: the later article's, as the store keeps one per id)."""
    return [fact for article in articles for fact in article_facts(article)]
