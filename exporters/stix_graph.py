"""What surrounds a bundle's primary objects: reports, actors, malware, CVEs, techniques and the links.

Each record brings, within the caps of exporters.caps: a ``report`` per cited article (its most recent
ones), an ``intrusion-set`` per threat actor (MISP galaxy name and synonyms) with the ``malware``
families the galaxy says it runs, and the ``vulnerability`` and ``attack-pattern`` objects of the CVEs
and ATT&CK techniques its articles name. Relationships (STIX 2.1 s. 5, Appendix B): an indicator
``indicates`` an intrusion set or an attack pattern; an intrusion set ``uses`` its malware (so the
indicator reaches the malware through its actor) and is ``attributed-to`` the state the galaxy names as its
suspected sponsor, a ``threat-actor`` of type ``nation-state``; anything else is ``related-to`` (there is no
indicator-to-vulnerability type). An indicator that accounts reported seen brings its ``sighting`` first.
What one record adds that no earlier record brought, its own object
included, is held to ``STIX_BYTES_PER_RECORD``, so the bundle's size follows its record count however
much the records' articles mention.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import orjson

from exporters.base import ExportContext
from exporters.caps import (
    ACTORS_PER_RECORD,
    ALIASES_PER_ACTOR,
    CVES_PER_RECORD,
    FAMILIES_PER_ACTOR,
    STIX_BYTES_PER_RECORD,
    TECHNIQUES_PER_RECORD,
    first_distinct,
)
from exporters.stix_objects import (
    TLP_CLEAR,
    attack_pattern_object,
    dates,
    intrusion_set_object,
    malware_object,
    relationship_object,
    report_object,
    sighting_object,
    sponsor_object,
)
from exporters.stix_objects import vulnerability_object as _vulnerability
from store.galaxy import actor_families, display_name, state_sponsor, threat_actor
from store.ioctypes import Stix, mapping
from store.records import Ioc
from store.stixids import attack_pattern_id, named_id, vulnerability_id

Maker = Callable[[str, str], dict[str, Any]]  # (created, modified) -> object


def _size(obj: dict[str, Any]) -> int:
    return len(orjson.dumps(obj)) + 1  # and its separating comma


def actor_object(canonical: str, created: str, modified: str) -> dict[str, Any]:
    """A threat actor's ``intrusion-set``: the galaxy's spelling, its synonyms (capped) as aliases."""
    entry = threat_actor(canonical)
    name = display_name(canonical)
    aliases = [a for a in dict.fromkeys([canonical, *(entry.synonyms if entry else ())]) if a.lower() != name.lower()]
    return intrusion_set_object(canonical, name, aliases[:ALIASES_PER_ACTOR], created, modified)


def _actor_maker(canonical: str) -> Maker:
    return partial(actor_object, canonical)


class _Spending:
    """One record's allowance of bytes, less its own object, for objects the bundle does not hold yet."""

    def __init__(self, own: int) -> None:
        self.left = STIX_BYTES_PER_RECORD - own

    def afford(self, cost: int) -> bool:
        if cost > self.left:
            return False
        self.left -= cost
        return True


class Graph:
    """The context objects of a bundle's records, collected record by record, written after them."""

    def __init__(self, ctx: ExportContext) -> None:
        self.ctx = ctx
        self.makers: dict[str, Maker] = {}  # object id -> builder; insertion order is output order
        self.spans: dict[str, tuple[str, str]] = {}  # object id -> (created, modified) over its records
        self.relationships: dict[tuple[str, str, str], tuple[str, str]] = {}
        self.reports: dict[str, list[str]] = {}  # article id -> the primary objects it brought
        self.report_dates: dict[str, str] = {}  # article id -> a date for a report published when unknown
        self.sightings: list[dict[str, Any]] = []

    def collect(self, ioc: Ioc, primary: dict[str, Any]) -> None:
        """Add what ``ioc`` brings (its primary object, ``primary``, is already in the bundle)."""
        primary_id, spending, when = primary["id"], _Spending(_size(primary)), dates(ioc)
        is_indicator = mapping(ioc.type, "stix", Stix).object_type == "indicator"
        indicates = "indicates" if is_indicator else "related-to"
        if is_indicator and ioc.sightings:
            sighting = sighting_object(ioc, primary_id)
            if spending.afford(_size(sighting)):
                self.sightings.append(sighting)
        cited = self.ctx.cited(ioc)
        self._reports(cited[:1], ioc, primary_id, spending)  # where it comes from first; more reports last
        for canonical in first_distinct(ioc.threat_actors, ACTORS_PER_RECORD, str.lower):
            actor = named_id("intrusion-set", canonical)
            if self._link(primary_id, indicates, actor, _actor_maker(canonical), when, spending):
                self._families(canonical, actor, when, spending)
        for cve in first_distinct(ioc.cves, CVES_PER_RECORD):
            self._link(primary_id, "related-to", vulnerability_id(cve), partial(_vulnerability, cve), when, spending)
        for tid in first_distinct(ioc.techniques, TECHNIQUES_PER_RECORD):
            make = partial(attack_pattern_object, tid)
            self._link(primary_id, indicates, attack_pattern_id(tid), make, when, spending)
        self._reports(cited[1:], ioc, primary_id, spending)

    def _families(self, canonical: str, actor: str, when: tuple[str, str], spending: _Spending) -> None:
        """What the galaxy says of an actor: the state it is attributed to, the malware families it uses."""
        sponsor = state_sponsor(canonical)
        if sponsor:
            self._link(
                actor,
                "attributed-to",
                named_id("threat-actor", sponsor),
                partial(sponsor_object, sponsor),
                when,
                spending,
            )
        for family in actor_families(canonical)[:FAMILIES_PER_ACTOR]:
            malware = named_id("malware", family)
            self._link(actor, "uses", malware, partial(malware_object, family), when, spending)

    def _reports(self, cited: list[str], ioc: Ioc, primary_id: str, spending: _Spending) -> None:
        for article_id in cited:
            refs = self.reports.get(article_id)
            if refs is None:
                new = report_object(article_id, self.ctx.articles[article_id], [primary_id], dates(ioc)[0])
                if spending.afford(_size(new)):
                    self.reports[article_id], self.report_dates[article_id] = [primary_id], dates(ioc)[0]
            elif primary_id not in refs and spending.afford(len(primary_id) + 3):
                refs.append(primary_id)

    def _link(
        self, source: str, kind: str, target: str, make: Maker, when: tuple[str, str], spending: _Spending
    ) -> bool:
        """``source kind target``, with ``target`` built by ``make`` unless held; False when unaffordable."""
        if source == target:
            return False  # a CVE record's own CVE, an ATT&CK record's own technique
        key = (source, kind, target)
        cost = 0 if key in self.relationships else _size(relationship_object(source, kind, target, *when))
        cost += 0 if target in self.makers else _size(make(*when))
        if not spending.afford(cost):
            return False
        self.relationships.setdefault(key, when)
        self.makers.setdefault(target, make)
        old = self.spans.get(target)
        self.spans[target] = (min(old[0], when[0]), max(old[1], when[1])) if old else when
        return True

    def objects(self, emitted: set[str]) -> Iterator[dict[str, Any]]:
        """The marking definition, then every collected object not already ``emitted``, the sightings, the
        reports and the relationships."""
        yield dict(TLP_CLEAR)
        for object_id, make in self.makers.items():
            if object_id not in emitted:
                yield make(*self.spans[object_id])
        yield from self.sightings
        for article_id, refs in self.reports.items():
            yield report_object(article_id, self.ctx.articles[article_id], refs, self.report_dates[article_id])
        for (source, kind, target), (created, modified) in self.relationships.items():
            yield relationship_object(source, kind, target, created, modified)
