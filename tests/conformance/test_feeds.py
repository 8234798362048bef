"""Saved feeds on every backend: owner-scoped reads and writes (another account's feed is not found), the
per-account quota, unique names per owner, updates, deletes, and a deleted account's feeds going with it."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from conformance.factories import at, replace, user

from store.base import Conflict, NotFound, QuotaExceeded
from store.ports import Stores
from store.records import Feed


def feed(owner_id: str, name: str, minutes: float = 0, **filters: list[str]) -> Feed:
    return Feed(
        id=str(uuid.uuid4()),
        user_id=owner_id,
        name=name,
        filters=dict(filters),
        created_at=at(minutes=minutes),
        modified_at=at(minutes=minutes),
    )


@pytest.fixture
async def owners(stores: Stores) -> tuple[str, str]:
    ana, bob = user("ana@example.com", "pro"), user("bob@example.com", "pro")
    await stores.accounts.create_user(ana)
    await stores.accounts.create_user(bob)
    return ana.id, bob.id


async def test_round_trip_in_creation_order(stores: Stores, owners: tuple[str, str]) -> None:
    ana, _ = owners
    later = feed(ana, "finance", 5, type=["ipv4", "domain"], industry=["finance"], confidence=["high"])
    first = feed(ana, "actors", 1, threat_actor=["lazarus"], source=["Example News"])
    for f in (later, first):
        assert await stores.feeds.create_feed(f, 50) == f
    assert await stores.feeds.list_feeds(ana) == [first, later]
    assert await stores.feeds.get_feed(ana, later.id) == later


async def test_another_accounts_feed_is_not_found(stores: Stores, owners: tuple[str, str]) -> None:
    ana, bob = owners
    mine = await stores.feeds.create_feed(feed(ana, "mine", type=["url"]), 50)
    assert await stores.feeds.get_feed(bob, mine.id) is None
    assert await stores.feeds.list_feeds(bob) == []
    with pytest.raises(NotFound):
        await stores.feeds.update_feed(replace(mine, user_id=bob, name="stolen"))
    with pytest.raises(NotFound):
        await stores.feeds.delete_feed(bob, mine.id)
    assert await stores.feeds.get_feed(ana, mine.id) == mine  # untouched


async def test_quota_holds_under_concurrent_creations(stores: Stores, owners: tuple[str, str]) -> None:
    ana, bob = owners
    results = await asyncio.gather(
        *(stores.feeds.create_feed(feed(ana, f"f{n}"), 3) for n in range(8)), return_exceptions=True
    )
    made = [r for r in results if isinstance(r, Feed)]
    assert all(isinstance(r, Feed | QuotaExceeded) for r in results)
    assert len(made) <= 3 and len(await stores.feeds.list_feeds(ana)) == len(made)
    # Racing creations may all withdraw (MongoFeeds.create_feed); one at a time, the quota fills exactly.
    for n in range(len(made), 3):
        await stores.feeds.create_feed(feed(ana, f"again{n}"), 3)
    with pytest.raises(QuotaExceeded):
        await stores.feeds.create_feed(feed(ana, "one too many"), 3)
    assert await stores.feeds.create_feed(feed(bob, "f0"), 1)  # per account: bob has his own quota
    with pytest.raises(QuotaExceeded):
        await stores.feeds.create_feed(feed(bob, "f1"), 1)


async def test_names_are_unique_per_owner(stores: Stores, owners: tuple[str, str]) -> None:
    ana, bob = owners
    first = await stores.feeds.create_feed(feed(ana, "prod"), 50)
    other = await stores.feeds.create_feed(feed(ana, "staging"), 50)
    with pytest.raises(Conflict):
        await stores.feeds.create_feed(feed(ana, "prod"), 50)
    with pytest.raises(Conflict):
        await stores.feeds.update_feed(replace(other, name="prod"))
    assert await stores.feeds.create_feed(feed(bob, "prod"), 50)
    assert await stores.feeds.get_feed(ana, first.id) == first


async def test_update_replaces_name_and_filters(stores: Stores, owners: tuple[str, str]) -> None:
    ana, _ = owners
    saved = await stores.feeds.create_feed(feed(ana, "old", type=["ipv4"]), 50)
    changed = replace(saved, name="new", filters={"confidence": ["high"]}, modified_at=at(minutes=9))
    assert await stores.feeds.update_feed(changed) == changed
    assert await stores.feeds.get_feed(ana, saved.id) == changed
    with pytest.raises(NotFound):
        await stores.feeds.update_feed(replace(changed, id=str(uuid.uuid4())))


async def test_delete_and_every_feed(stores: Stores, owners: tuple[str, str]) -> None:
    ana, bob = owners
    a = await stores.feeds.create_feed(feed(ana, "a", 1), 50)
    b = await stores.feeds.create_feed(feed(bob, "b", 2), 50)
    assert sorted(f.id for f in await stores.feeds.all_feeds()) == sorted([a.id, b.id])
    await stores.feeds.delete_feed(ana, a.id)
    assert await stores.feeds.get_feed(ana, a.id) is None
    assert await stores.feeds.all_feeds() == [b]


async def test_an_unknown_owner_or_a_deleted_account(stores: Stores, owners: tuple[str, str]) -> None:
    ana, _ = owners
    with pytest.raises(Conflict):
        await stores.feeds.create_feed(feed(str(uuid.uuid4()), "orphan"), 50)
    await stores.feeds.create_feed(feed(ana, "mine"), 50)
    await stores.accounts.delete_user(ana)
    assert await stores.feeds.list_feeds(ana) == [] and await stores.feeds.all_feeds() == []
