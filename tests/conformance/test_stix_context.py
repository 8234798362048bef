"""STIX context objects on every backend: store-given times that never move backwards, a new version only
when the facts change, and keyset pages in (date_added, id) order that return every object once."""

from __future__ import annotations

from datetime import timedelta

from store.ports import ContextStore, Stores
from store.records import utcnow
from store.stix_context import ContextFact, ContextObject, ContextQuery, actor_facts, relationship, report_fact


def report(n: int, refs: tuple[str, ...] = ("indicator--1",)) -> ContextFact:
    return report_fact(f"article-{n}", f"Report {n}", f"https://news.example/{n}", "Feed", utcnow(), refs)


async def walk(context: ContextStore, limit: int, **filters: object) -> list[ContextObject]:
    """Every stored object, page by page from each page's last (date_added, id)."""
    seen: list[ContextObject] = []
    while True:
        page = await context.context_page(
            ContextQuery(after=(seen[-1].date_added, seen[-1].id) if seen else None, limit=limit, **filters)
        )  # type: ignore[arg-type]
        seen += page
        if len(page) < limit:
            return seen


async def test_new_facts_take_one_time_and_unchanged_ones_are_left_alone(stores: Stores) -> None:
    facts = [report(1), *actor_facts("lockbit"), relationship("indicator--1", "indicates", "intrusion-set--x")]
    assert await stores.context.put_context(facts) == len({f.id for f in facts})
    version = await stores.iocs.data_version()
    held = await walk(stores.context, 100)
    assert {o.id for o in held} == {f.id for f in facts}
    assert {"report", "intrusion-set", "malware", "relationship"} == {o.type for o in held}
    assert all(o.created == o.modified == o.date_added == held[0].date_added for o in held)
    assert await stores.context.put_context(facts) == 0  # a re-run: nothing new, nothing changed
    assert await walk(stores.context, 100) == held and await stores.iocs.data_version() == version


async def test_a_changed_fact_is_a_new_version_added_after_every_other(stores: Stores) -> None:
    await stores.context.put_context([report(1), report(2)])
    first = {o.id: o for o in await walk(stores.context, 100)}
    await stores.context.put_context([report(3)])
    assert await stores.context.put_context([report(1, ("indicator--1", "indicator--2"))]) == 1
    now = await walk(stores.context, 100)
    changed = now[-1]
    assert changed.facts["refs"] == ["indicator--1", "indicator--2"] and changed.type == "report"
    old = first[changed.id]
    assert changed.created == old.created and changed.modified > old.modified
    assert changed.date_added > max(o.date_added for o in now[:-1])  # a poll from any earlier page sees it
    assert [o.date_added for o in now] == sorted(o.date_added for o in now)


async def test_writes_stamp_later_than_anything_stored_even_when_the_clock_is_behind(stores: Stores) -> None:
    await stores.context.put_context([report(n) for n in range(3)])
    for n in range(3, 8):  # writes within one millisecond of each other still stamp later each time
        await stores.context.put_context([report(n)])
    held = await walk(stores.context, 100)
    added = [o.date_added for o in held]
    assert added == sorted(added) and len(set(added[2:])) == 6


async def test_keyset_pages_return_every_object_once_and_filter_in_the_store(stores: Stores) -> None:
    for n in range(7):
        await stores.context.put_context([report(n), *actor_facts(("lockbit", "apt28", "fin7")[n % 3])])
    every = await walk(stores.context, 100)
    assert len(every) == len({o.id for o in every})
    for limit in (1, 2, 5):
        assert await walk(stores.context, limit) == every
    assert await walk(stores.context, 2, types=("report",)) == [o for o in every if o.type == "report"]
    some = (every[1].id, every[-1].id)
    assert await walk(stores.context, 1, ids=some) == [every[1], every[-1]]
    assert await walk(stores.context, 3, versions=(every[-1].modified,)) == [
        o for o in every if o.modified == every[-1].modified
    ]
    later = await stores.context.context_page(ContextQuery(added_after=every[0].date_added, limit=100))
    assert later == [o for o in every if o.date_added > every[0].date_added]
    assert await stores.context.context_page(ContextQuery(added_after=utcnow() + timedelta(days=1))) == []
