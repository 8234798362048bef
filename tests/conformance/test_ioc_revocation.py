"""Revocation on every backend: the record keeps its data, says why and when, and its ``modified`` moves to
the revocation so date pollers see it; the counters follow; later reports keep the verdict; the live feed
gets an ``ioc-revoked`` event."""

from __future__ import annotations

import orjson
from conformance.factories import at, ioc, replace

from store import events
from store.ports import IocStore, Stores
from store.query import IocQuery


async def test_revoke_marks_the_record_and_moves_modified(iocs: IocStore) -> None:
    record = ioc("evil.example", article_ids=["a1"], last_seen=at(days=-1), modified=at(days=-1))
    await iocs.upsert_iocs([record])
    version = await iocs.data_version()
    revoked = await iocs.revoke_ioc("domain", "evil.example", "sinkholed by the registrar", at())
    assert revoked is not None and revoked == await iocs.get_ioc("domain", "evil.example")
    assert (revoked.revoked, revoked.revoked_at, revoked.revoked_reason) == (True, at(), "sinkholed by the registrar")
    assert revoked.modified == at() and revoked.last_seen == at(days=-1)
    assert revoked.article_ids == ["a1"]
    assert await iocs.data_version() > version
    assert [i.value for i in await iocs.all_iocs(IocQuery(since=at(minutes=-1)))] == ["evil.example"]


async def test_revoking_again_or_nothing_changes_nothing(iocs: IocStore) -> None:
    await iocs.upsert_iocs([ioc("evil.example")])
    first = await iocs.revoke_ioc("domain", "evil.example", "first", at(minutes=5))
    version = await iocs.data_version()
    again = await iocs.revoke_ioc("domain", "evil.example", "second", at(minutes=9))
    assert again == first and again is not None and again.revoked_reason == "first"
    assert await iocs.data_version() == version
    assert await iocs.revoke_ioc("domain", "missing.example", "x", at()) is None


async def test_a_later_report_keeps_the_revocation(iocs: IocStore) -> None:
    await iocs.upsert_iocs([ioc("evil.example")])
    await iocs.revoke_ioc("domain", "evil.example", "benign", at(minutes=5))
    await iocs.upsert_iocs([ioc("evil.example", last_seen=at(days=1), modified=at(days=1), sources=["Other"])])
    stored = await iocs.get_ioc("domain", "evil.example")
    assert stored is not None and stored.revoked and stored.revoked_at == at(minutes=5)
    assert stored.last_seen == at(days=1) and stored.sources == ["Example News", "Other"]


async def test_counters_follow_the_moved_modified(iocs: IocStore) -> None:
    await iocs.upsert_iocs([ioc("evil.example", modified=at(days=-3)), ioc("good.example", modified=at(days=-3))])
    await iocs.revoke_ioc("domain", "evil.example", "benign", at())
    query = IocQuery(since=at(minutes=-30))
    assert await iocs.estimate_iocs(query) == (1, True)
    assert await iocs.count_iocs(query) == 1


async def test_revoke_appends_an_ioc_revoked_event(stores: Stores) -> None:
    await stores.iocs.upsert_iocs([ioc("evil.example")])
    record = await events.revoke(stores, "domain", "evil.example", "benign", at())
    again = await events.revoke(stores, "domain", "evil.example", "benign", at(minutes=1))
    assert record is not None and again == record
    kinds = [(e.kind, orjson.loads(e.data)) for e in await stores.events.read(None, 10)]
    assert [kind for kind, _ in kinds] == ["ioc-revoked"]
    assert kinds[0][1]["value"] == "evil.example" and kinds[0][1]["revoked"] is True


def test_merge_keeps_the_earliest_revocation_in_any_order() -> None:
    from store.codec import merge_ioc, revoked

    a = revoked(ioc("x.example"), "a", at(minutes=1))
    b = revoked(replace(ioc("x.example"), sources=["B"]), "b", at(minutes=2))
    assert merge_ioc(a, b).revoked_reason == merge_ioc(b, a).revoked_reason == "a"
