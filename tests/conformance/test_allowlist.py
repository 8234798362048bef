"""Allowlists on every backend: entries per owner, one per (kind, value), the quota, deletion by owner only,
and the exclusion matcher they build."""

from __future__ import annotations

import uuid

import pytest
from conformance.factories import at, ioc, user

from store.base import NotFound, QuotaExceeded
from store.exclusions import AccountExclusions, EntryError, parse_entry
from store.ports import Stores
from store.ports.allowlist import AllowEntry


def entry(owner: str, text: str, minutes: float = 0) -> AllowEntry:
    kind, ioc_type, value = parse_entry(text)
    return AllowEntry(str(uuid.uuid4()), owner, kind, ioc_type, value, at(minutes=minutes))


async def owners(stores: Stores) -> tuple[str, str]:
    ana, bo = user("ana@example.com"), user("bo@example.com")
    for one in (ana, bo):
        await stores.accounts.create_user(one)
    return ana.id, bo.id


async def test_entries_per_owner_once_each(stores: Stores) -> None:
    ana, bo = await owners(stores)
    first = await stores.allowlist.add_allow_entries([entry(ana, "10.1.0.0/16"), entry(ana, "Corp[.]Example", 1)], 10)
    again = await stores.allowlist.add_allow_entries([entry(ana, "corp.example", 2)], 10)
    assert again[0].id == first[1].id  # the held entry, not a second one
    await stores.allowlist.add_allow_entries([entry(bo, "8.8.8.8")], 10)
    held = await stores.allowlist.list_allow_entries(ana)
    assert [(e.kind, e.value) for e in held] == [("cidr", "10.1.0.0/16"), ("domain", "corp.example")]
    assert held[0].created_at == at()
    with pytest.raises(NotFound):
        await stores.allowlist.delete_allow_entry(bo, held[0].id)  # another owner's entry
    await stores.allowlist.delete_allow_entry(ana, held[0].id)
    assert [e.value for e in await stores.allowlist.list_allow_entries(ana)] == ["corp.example"]


async def test_the_quota_refuses_the_whole_batch(stores: Stores) -> None:
    ana, _ = await owners(stores)
    await stores.allowlist.add_allow_entries([entry(ana, "a.example")], 2)
    with pytest.raises(QuotaExceeded):
        await stores.allowlist.add_allow_entries([entry(ana, "b.example"), entry(ana, "c.example")], 2)
    assert [e.value for e in await stores.allowlist.list_allow_entries(ana)] == ["a.example"]


async def test_a_deleted_account_takes_its_entries(stores: Stores) -> None:
    ana, _ = await owners(stores)
    await stores.allowlist.add_allow_entries([entry(ana, "a.example")], 2)
    await stores.accounts.delete_user(ana)
    assert await stores.allowlist.list_allow_entries(ana) == []


def test_exclusions_match_values_networks_and_subdomains() -> None:
    owner = "u"
    matcher = AccountExclusions.from_allowlist(
        [entry(owner, "10.1.0.0/16"), entry(owner, "corp.example"), entry(owner, "d41d8cd98f00b204e9800998ecf8427e")]
    )
    left_out = [
        ioc("10.1.2.3", "ipv4"),
        ioc("vpn.corp.example"),
        ioc("https://x.corp.example/a", "url"),
        ioc("it@corp.example", "email"),
        ioc("d41d8cd98f00b204e9800998ecf8427e", "md5"),
    ]
    kept = [ioc("10.2.0.1", "ipv4"), ioc("corp.example.evil"), ioc("https://evil.example/corp.example", "url")]
    assert all(matcher.excludes(r) for r in left_out)
    assert not any(matcher.excludes(r) for r in kept)
    same = AccountExclusions.from_allowlist(
        [entry(owner, "corp.example"), entry(owner, "d41d8cd98f00b204e9800998ecf8427e"), entry(owner, "10.1.0.0/16")]
    )
    assert same.digest == matcher.digest and AccountExclusions().empty
    assert matcher.with_values([("ipv4", "45.1.0.1")]).excludes(ioc("45.1.0.1", "ipv4"))


@pytest.mark.parametrize("text", ["", "not an entry", "10.0.0.0/33", "0.0.0.0/0", "x" * 3000])
def test_entries_that_are_none(text: str) -> None:
    with pytest.raises(EntryError):
        parse_entry(text)
