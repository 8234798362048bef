"""Users and API keys on every backend (spec, Authentication: quotas, delete, deactivate, revocation)."""

from __future__ import annotations

import asyncio

import pytest
from conformance.factories import BASE, api_key, at, user

from store.base import Conflict, NotFound, QuotaExceeded
from store.ports import AccountStore, Stores


async def test_user_round_trip_by_id_and_case_insensitive_email(accounts: AccountStore) -> None:
    ana = await accounts.create_user(user("Ana@Example.com", "pro"))
    by_id = await accounts.get_user(user_id=ana.id)
    by_email = await accounts.get_user(email="ANA@example.COM")
    assert by_id == by_email
    assert (by_id.id, by_id.email, by_id.tier, by_id.created_at) == (ana.id, "ana@example.com", "pro", BASE)


async def test_duplicate_email_conflicts_and_unknown_user_is_not_found(accounts: AccountStore) -> None:
    await accounts.create_user(user("ana@example.com"))
    with pytest.raises(Conflict):
        await accounts.create_user(user("ANA@example.com"))
    with pytest.raises(NotFound):
        await accounts.get_user(email="nobody@example.com")
    with pytest.raises(NotFound):
        await accounts.get_user(user_id="no-such-id")


async def test_keys_are_listed_oldest_first_and_found_by_hash(accounts: AccountStore) -> None:
    ana = await accounts.create_user(user())
    late = await accounts.create_key(api_key(ana, "late", minutes=5, expires_at=at(days=30)), max_keys=3)
    early = await accounts.create_key(api_key(ana, "early", minutes=1, scopes=["read:articles", "read:iocs"]), 3)
    assert [k.name for k in await accounts.list_keys(ana.id)] == ["early", "late"]
    assert await accounts.key_by_hash(late.key_hash) == late
    assert await accounts.key_by_hash(early.key_hash) == early
    assert await accounts.key_by_hash("0" * 64) is None
    assert await accounts.list_keys("someone-else") == []
    assert await accounts.key_with_user(late.key_hash) == (late, ana)
    assert await accounts.key_with_user("0" * 64) is None


async def test_same_created_at_lists_by_name(accounts: AccountStore) -> None:
    ana = await accounts.create_user(user())
    for name in ("b", "c", "a"):
        await accounts.create_key(api_key(ana, name), 5)
    assert [k.name for k in await accounts.list_keys(ana.id)] == ["a", "b", "c"]


async def test_duplicate_key_name_conflicts_per_user_only(accounts: AccountStore) -> None:
    ana = await accounts.create_user(user("ana@example.com"))
    bo = await accounts.create_user(user("bo@example.com"))
    await accounts.create_key(api_key(ana, "main"), 3)
    with pytest.raises(Conflict):
        await accounts.create_key(api_key(ana, "main"), 3)
    await accounts.create_key(api_key(bo, "main"), 3)
    assert len(await accounts.list_keys(ana.id)) == 1


async def test_a_key_needs_an_existing_user(accounts: AccountStore) -> None:
    with pytest.raises(Conflict):
        await accounts.create_key(api_key(user(), "main"), 3)


async def test_quota_refuses_the_key_past_max_keys(accounts: AccountStore) -> None:
    ana = await accounts.create_user(user())
    for n in range(3):
        await accounts.create_key(api_key(ana, f"k{n}", minutes=n), max_keys=3)
    with pytest.raises(QuotaExceeded):
        await accounts.create_key(api_key(ana, "k3"), max_keys=3)
    assert [k.name for k in await accounts.list_keys(ana.id)] == ["k0", "k1", "k2"]
    await accounts.delete_key(ana.id, "k1")
    await accounts.create_key(api_key(ana, "k3", minutes=9), max_keys=3)
    assert [k.name for k in await accounts.list_keys(ana.id)] == ["k0", "k2", "k3"]


async def test_concurrent_creations_never_pass_the_quota(accounts: AccountStore) -> None:
    ana = await accounts.create_user(user())
    await accounts.create_key(api_key(ana, "k0"), max_keys=3)
    results = await asyncio.gather(*(accounts.create_key(api_key(ana, f"c{n}"), max_keys=3) for n in range(6)),
                                   return_exceptions=True)
    assert all(isinstance(r, QuotaExceeded) or not isinstance(r, BaseException) for r in results)
    assert 1 <= len(await accounts.list_keys(ana.id)) <= 3


async def test_delete_key_remembers_the_hash_as_revoked(accounts: AccountStore) -> None:
    ana = await accounts.create_user(user())
    key = await accounts.create_key(api_key(ana, "main"), 3)
    assert not await accounts.is_revoked(key.key_hash)
    assert await accounts.key_with_user(key.key_hash) == (key, ana)
    await accounts.delete_key(ana.id, "main")
    assert await accounts.key_by_hash(key.key_hash) is None
    assert await accounts.key_with_user(key.key_hash) is None  # a deleted key stops at once
    assert await accounts.is_revoked(key.key_hash)
    assert not await accounts.is_revoked("never-existed")
    with pytest.raises(NotFound):
        await accounts.delete_key(ana.id, "main")


async def test_deactivate_and_reactivate(accounts: AccountStore) -> None:
    ana = await accounts.create_user(user())
    key = await accounts.create_key(api_key(ana, "main"), 3)
    await accounts.set_key_active(ana.id, "main", False)
    stored = await accounts.key_by_hash(key.key_hash)
    assert stored is not None and stored.active is False
    found = await accounts.key_with_user(key.key_hash)
    assert found is not None and found[0].active is False
    assert not await accounts.is_revoked(key.key_hash)
    await accounts.set_key_active(ana.id, "main", False)  # idempotent: still found
    await accounts.set_key_active(ana.id, "main", True)
    stored = await accounts.key_by_hash(key.key_hash)
    assert stored is not None and stored.active is True
    found = await accounts.key_with_user(key.key_hash)
    assert found is not None and found[0].active is True  # not a remembered inactive copy
    with pytest.raises(NotFound):
        await accounts.set_key_active(ana.id, "missing", True)
    with pytest.raises(NotFound):
        await accounts.set_key_active("other-user", "main", True)


async def test_account_writes_leave_the_data_version_alone(stores: Stores) -> None:
    accounts, before = stores.accounts, await stores.articles.data_version()
    ana = await accounts.create_user(user())
    await accounts.create_key(api_key(ana, "main"), 3)
    await accounts.delete_key(ana.id, "main")
    assert await stores.articles.data_version() == await stores.iocs.data_version() == before
