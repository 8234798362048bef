"""The STIX objects around the IOC records, stored one per object so TAXII can page them soundly.

What surrounds the records (a ``report`` per article that brought indicators, an ``intrusion-set`` per
threat actor, a ``malware`` per family the MISP galaxy says an actor runs, and the relationships
between them and the records' objects) is kept as *facts*: the object's id, its STIX type and the few
values its object is built from (exporters.stix_context builds the object). Each fact is stored with
three times the store assigns when it writes it:

- ``created``: when the object was first stored; never changes (STIX 2.1 section 3.2).
- ``modified``: when its facts last changed; a change always moves it later, never earlier.
- ``date_added``: when the current version was stored (TAXII 2.1 section 5.4: a manifest record's
  ``date_added`` is that of one version); a change adds the new version, so a client polling with
  ``added_after`` receives it.

Every write stamps later than every ``date_added`` already stored (``stamp``), and TAXII pages these
objects by the keyset (date_added, id) (TAXII 2.1 section 3.4: ``next``, ``added_after``): an object
stored while a client walks the collection lands after every position handed out, so paging returns
each object once and a poll from the last ``X-TAXII-Date-Added-Last`` misses none. Facts derived from
the id alone (an actor, a family, a relationship) never change once stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson

from store.galaxy import actor_families, state_sponsor
from store.records import iso, utcnow
from store.stixids import named_id

CONTEXT_TYPES: tuple[str, ...] = ("report", "intrusion-set", "malware", "relationship")
_TICK = timedelta(milliseconds=1)  # the stores' time precision (store.records: milliseconds)


@dataclass(frozen=True, slots=True)
class ContextFact:
    """One object to hold: its STIX id and type, and what its object is built from."""

    id: str
    type: str
    facts: dict[str, Any]

    def encoded(self) -> bytes:
        """The facts in one canonical form: equal facts, equal bytes (how a write tells a change)."""
        return encode_facts(self.facts)


@dataclass(frozen=True, slots=True)
class ContextObject:
    """A stored fact with the times the store gave it."""

    id: str
    type: str
    facts: dict[str, Any]
    created: datetime
    modified: datetime
    date_added: datetime


@dataclass(frozen=True, slots=True)
class ContextQuery:
    """One page of stored context objects in (date_added, id) order; empty tuples filter nothing.

    ``added_after`` and ``after`` (the keyset position (date_added, id) of the last object handed out)
    are exclusive; ``versions`` keeps objects whose ``modified`` is one of them (TAXII ``match[version]``).
    """

    added_after: datetime | None = None
    after: tuple[datetime, str] | None = None
    types: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    versions: tuple[datetime, ...] = ()
    limit: int = 100


def stamp(latest: datetime | None, now: datetime | None = None) -> datetime:
    """The time of a write: now, or just after the latest ``date_added`` stored when the clock is behind
    it (a step back, two writes within one millisecond): date_added only ever grows."""
    now = now or utcnow()
    return now if latest is None or now > latest else latest + _TICK


def changes(incoming: Iterable[ContextFact], held: Mapping[str, ContextObject], at: datetime) -> list[ContextObject]:
    """The objects a write stores: each new fact, and each held one whose facts differ (a new version:
    ``modified`` and ``date_added`` move to ``at``, ``modified`` at least a tick past the old one)."""
    latest = {fact.id: fact for fact in incoming}  # one fact per id: the last given wins
    written = []
    for fact in latest.values():
        old = held.get(fact.id)
        if old is None:
            written.append(ContextObject(fact.id, fact.type, fact.facts, at, at, at))
        elif encode_facts(old.facts) != fact.encoded():
            modified = max(at, old.modified + _TICK)
            written.append(ContextObject(fact.id, fact.type, fact.facts, old.created, modified, at))
    return written


# -- facts -------------------------------------------------------------------------------------------


def actor_id(canonical: str) -> str:
    return named_id("intrusion-set", canonical)


def actor_facts(canonical: str) -> list[ContextFact]:
    """An actor's ``intrusion-set``, each ``malware`` family the galaxy says it runs, and the ``uses``
    relationship to each (STIX 2.1 Appendix B: intrusion-set uses malware)."""
    actor = actor_id(canonical)
    found = [ContextFact(actor, "intrusion-set", {"name": canonical.lower()})]
    sponsor = state_sponsor(canonical)
    if sponsor:  # STIX 2.1 Appendix B: intrusion-set attributed-to threat-actor
        held = named_id("threat-actor", sponsor)
        found += [ContextFact(held, "threat-actor", {"name": sponsor}), relationship(actor, "attributed-to", held)]
    for family in actor_families(canonical):
        malware = named_id("malware", family)
        found += [ContextFact(malware, "malware", {"name": family}), relationship(actor, "uses", malware)]
    return found


def relationship(source: str, kind: str, target: str) -> ContextFact:
    """``source kind target``; its id is the STIX export's for the same triple (exporters.stix_graph)."""
    return ContextFact(
        named_id("relationship", f"{source}:{kind}:{target}"),
        "relationship",
        {"source": source, "kind": kind, "target": target},
    )


def report_fact(
    article_id: str, title: str, url: str, source: str, published: datetime | None, refs: Iterable[str]
) -> ContextFact:
    """An article as a ``report`` of the objects it brought (sorted: one set, one form)."""
    facts = {
        "article": article_id,
        "title": title,
        "url": url,
        "source": source,
        "published": iso(published) if published else None,
        "refs": sorted(set(refs)),
    }
    return ContextFact(named_id("report", article_id), "report", facts)


def encode_facts(facts: Mapping[str, Any]) -> bytes:
    return orjson.dumps(facts, option=orjson.OPT_SORT_KEYS)
