"""``ctiwire iocs recheck`` on every backend: stored records take the lists their value is on now, the
changed ones with a newer ``modified`` (pollers see them), and the lists' version is remembered."""

from __future__ import annotations

from conformance.factories import at, ioc

from ingest.recheck import recheck, recheck_if_upgraded, revoking
from store.ports import IocStore, Stores
from store.query import IocQuery
from store.records import Ioc
from store.warninglists import Warninglists

LISTS = Warninglists(
    [
        {"name": "Resolvers", "type": "cidr", "version": 2, "list": ["8.8.8.0/24"], "matching_attributes": ["ip-dst"]},
    ],
    "test",
)


async def test_recheck_updates_the_changed_records_only(iocs: IocStore) -> None:
    await iocs.upsert_iocs(
        [
            ioc("8.8.8.8", "ipv4"),  # stored before the lists named it
            ioc("45.153.160.7", "ipv4", warninglists=["Gone"]),  # named by a list that no longer does
            ioc("evil.example"),
        ]
    )
    assert await iocs.warninglists_version() is None
    seen: list[tuple[int, int]] = []
    report = await recheck(iocs, progress=lambda done, total: seen.append((done, total)), lists=LISTS)
    assert (report.checked, [r.value for r in report.listed], [r.value for r in report.unlisted]) == (
        3,
        ["8.8.8.8"],
        ["45.153.160.7"],
    )
    assert seen[-1] == (3, 3)
    listed = await iocs.get_ioc("ipv4", "8.8.8.8")
    assert listed is not None and listed.warninglists == ["Resolvers"] and listed.modified > at(days=1)
    untouched = await iocs.get_ioc("domain", "evil.example")
    assert untouched is not None and untouched.modified == at()
    polled = [r.value async for batch in iocs.iter_iocs(IocQuery(since=at(days=1))) for r in batch]
    assert polled == ["45.153.160.7"]  # back in the default lists, with its new modified
    assert await iocs.warninglists_version() == LISTS.version


async def test_recheck_runs_once_per_lists_version(iocs: IocStore) -> None:
    await iocs.upsert_iocs([ioc("8.8.8.8", "ipv4")])
    told: list[str] = []

    async def listed(records: list[Ioc]) -> None:
        told.extend(r.value for r in records)

    first = await recheck_if_upgraded(iocs, LISTS, on_listed=listed)
    assert first is not None and first.changed == 1 and told == ["8.8.8.8"]
    assert await recheck_if_upgraded(iocs, LISTS) is None
    assert (await recheck_if_upgraded(iocs, Warninglists([], "next"))) is not None


async def test_a_value_newly_listed_is_revoked_for_everyone(stores: Stores) -> None:
    """A SIEM that loaded the indicator before the lists named it must see it withdrawn, not just absent."""
    await stores.iocs.upsert_iocs([ioc("8.8.8.8", "ipv4"), ioc("evil.example")])
    await recheck(stores.iocs, lists=LISTS, on_listed=revoking(stores))
    listed = await stores.iocs.get_ioc("ipv4", "8.8.8.8")
    assert listed is not None and listed.revoked and listed.revoked_reason == "on warninglist Resolvers"
    kept = await stores.iocs.get_ioc("domain", "evil.example")
    assert kept is not None and not kept.revoked
    assert [e.kind for e in await stores.events.read(None, 100)] == ["ioc-revoked"]
