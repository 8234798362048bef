"""Rotating, renaming and re-scoping keys on every backend: a rotated key keeps its name and scopes and
gets a new secret; the former one works until its grace ends, then answers like a deleted key."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from cli import bootstrap
from store import accounts as account_rules
from store.apikeys import hash_key, matches, works
from store.base import Conflict, NotFound
from store.ports import AccountStore
from store.records import utcnow

EMAIL = "rita@example.com"


async def _delivered(accounts: AccountStore, name: str = "ci") -> account_rules.NewKey:
    await account_rules.create_user(accounts, EMAIL, "pro")
    new = await account_rules.create_key(accounts, EMAIL, name, ["read:iocs"])
    await account_rules.deliver_key(accounts, new)
    return new


@pytest.mark.parametrize("grace", ["none", "1h", "24h"])
async def test_the_old_secret_works_for_the_grace_and_the_new_once_delivered(accounts: AccountStore,
                                                                            grace: str) -> None:
    old = await _delivered(accounts)
    now = utcnow()
    new = await account_rules.rotate_key(accounts, EMAIL, "ci", grace, now=now)
    old_hash, new_hash = hash_key(old.secret), hash_key(new.secret)
    for digest in (old_hash, new_hash):  # one key, found by either secret
        found = await accounts.key_with_user(digest)
        assert found is not None and found[0].id == old.record.id and matches(found[0], digest)
        assert (await accounts.key_by_hash(digest)).id == old.record.id  # type: ignore[union-attr]
    [key] = await accounts.list_keys(old.record.user_id)
    assert (key.name, key.scopes, key.prefix, key.pending) == ("ci", ["read:iocs"], new.record.prefix, True)
    assert account_rules.key_state(key, now) == "never delivered"
    assert not works(key, new_hash, now)  # not handed out yet
    await account_rules.deliver_key(accounts, new)
    [key] = await accounts.list_keys(old.record.user_id)
    grace_end = now + account_rules.GRACES[grace]
    assert key.previous_expires_at == grace_end.replace(microsecond=grace_end.microsecond // 1000 * 1000)
    assert works(key, new_hash, now) and works(key, new_hash, now + timedelta(days=2))
    assert works(key, old_hash, now) == (grace != "none")
    if grace != "none":
        assert works(key, old_hash, now + account_rules.GRACES[grace] - timedelta(seconds=1))
    assert not works(key, old_hash, now + account_rules.GRACES[grace])
    assert account_rules.key_state(key, now) == "active"


async def test_a_deactivated_key_stops_both_secrets_and_cannot_be_rotated(accounts: AccountStore) -> None:
    old = await _delivered(accounts)
    now = utcnow()
    new = await account_rules.rotate_key(accounts, EMAIL, "ci", "24h", now=now)
    await account_rules.deliver_key(accounts, new)
    await accounts.set_key_active(old.record.user_id, "ci", False)
    [key] = await accounts.list_keys(old.record.user_id)
    assert not works(key, hash_key(old.secret), now) and not works(key, hash_key(new.secret), now)
    with pytest.raises(account_rules.AccountError):
        await account_rules.rotate_key(accounts, EMAIL, "ci", "1h")


async def test_rotating_again_or_deleting_revokes_every_former_secret(accounts: AccountStore) -> None:
    first = await _delivered(accounts)
    second = await account_rules.rotate_key(accounts, EMAIL, "ci", "24h")
    assert not await accounts.is_revoked(hash_key(first.secret))
    third = await account_rules.rotate_key(accounts, EMAIL, "ci", "24h")
    assert await accounts.is_revoked(hash_key(first.secret))  # two rotations back: gone, answers expired
    assert await accounts.key_with_user(hash_key(first.secret)) is None
    assert await accounts.key_with_user(hash_key(second.secret)) is not None
    await accounts.delete_key(first.record.user_id, "ci")
    assert await accounts.is_revoked(hash_key(second.secret)) and await accounts.is_revoked(hash_key(third.secret))


async def test_deleting_the_user_revokes_a_rotated_keys_former_secret(accounts: AccountStore) -> None:
    old = await _delivered(accounts)
    await account_rules.rotate_key(accounts, EMAIL, "ci", "24h")
    await accounts.delete_user(old.record.user_id)
    assert await accounts.is_revoked(hash_key(old.secret))


async def test_rotating_an_unknown_key_is_not_found(accounts: AccountStore) -> None:
    await _delivered(accounts)
    with pytest.raises(NotFound):
        await account_rules.rotate_key(accounts, EMAIL, "nope")
    with pytest.raises(account_rules.AccountError):
        await account_rules.rotate_key(accounts, EMAIL, "ci", "2h")


async def test_a_key_is_renamed_and_its_scopes_replaced(accounts: AccountStore) -> None:
    old = await _delivered(accounts)
    await account_rules.create_key(accounts, EMAIL, "other")
    assert await account_rules.rename_key(accounts, EMAIL, "ci", "  siem  ") == "siem"
    with pytest.raises(Conflict):
        await account_rules.rename_key(accounts, EMAIL, "siem", "other")
    with pytest.raises(NotFound):
        await account_rules.rename_key(accounts, EMAIL, "ci", "again")
    with pytest.raises(account_rules.AccountError):
        await account_rules.rename_key(accounts, EMAIL, "siem", "   ")
    assert await account_rules.set_scopes(accounts, EMAIL, "siem", ["read:articles", "read:iocs"]) == [
        "read:articles", "read:iocs"]
    for wrong in ([], ["nope:read"]):
        with pytest.raises(account_rules.AccountError):
            await account_rules.set_scopes(accounts, EMAIL, "siem", wrong)
    found = await accounts.key_with_user(hash_key(old.secret))
    assert found is not None and (found[0].name, found[0].scopes) == ("siem", ["read:articles", "read:iocs"])


async def test_a_free_key_gets_no_scope_beyond_its_tier(accounts: AccountStore) -> None:
    await account_rules.create_user(accounts, "fred@example.com", "free")
    await account_rules.create_key(accounts, "fred@example.com", "k")
    beyond = [s for s in account_rules.SCOPES if s not in account_rules.TIERS["free"].scopes]
    assert beyond
    with pytest.raises(account_rules.AccountError):
        await account_rules.set_scopes(accounts, "fred@example.com", "k", beyond[:1])


def test_keys_expiring_within_seven_days_are_flagged() -> None:
    now = utcnow()
    key = account_rules.ApiKey(id="k", user_id="u", name="n", key_hash="h", prefix="p", scopes=[], created_at=now)
    for expires, flagged in ((None, False), (now + timedelta(days=7), True), (now + timedelta(hours=1), True),
                             (now + timedelta(days=7, seconds=1), False), (now, False)):
        key.expires_at = expires
        assert account_rules.expires_soon(key, now) == flagged, expires


async def test_the_demo_status_says_a_rotated_demo_key_and_prints_no_old_secret(accounts: AccountStore,
                                                                              tmp_path: Path) -> None:
    demo = await bootstrap.create_demo(accounts, tmp_path)
    free = await accounts.get_user(email="demo-free@ctiwire.local")
    await account_rules.rotate_key(accounts, free.email, bootstrap.DEMO_KEY_NAME, "24h")
    lines = "\n".join(await bootstrap.demo_status(accounts, tmp_path))
    assert "demo Free key: rotated by an operator" in lines and demo["free"] not in lines
    assert demo["pro"] in lines  # the untouched one still printed
