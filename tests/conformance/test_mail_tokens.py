"""Mailed single-use links (password reset, address check) on every backend: only the hash is kept, a
link works once and until it expires, using one voids the user's other links of that purpose, two
requests with one link get it once, and deleting the user deletes its links."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from conformance.factories import user

from store.base import Store
from store.records import utcnow

HOUR = timedelta(hours=1)
# Real time: expired links may be dropped by the store on its own clock (a MongoDB TTL index).
BASE = utcnow()


async def test_a_link_works_once_and_until_it_expires(store: Store) -> None:
    ana = await store.create_user(user())
    await store.save_token("h1", "reset", ana.id, BASE + HOUR)
    assert await store.take_token("h1", "verify", BASE) is None  # another purpose: not this link
    assert await store.take_token("h1", "reset", BASE) == ana.id
    assert await store.take_token("h1", "reset", BASE) is None
    await store.save_token("h2", "reset", ana.id, BASE + HOUR)
    assert await store.take_token("h2", "reset", BASE + HOUR) is None  # expired at its moment
    assert await store.take_token("h2", "reset", BASE) is None  # and used up by the try


async def test_using_a_link_voids_the_users_other_links_of_its_purpose_only(store: Store) -> None:
    ana, bob = await store.create_user(user()), await store.create_user(user("bob@example.com"))
    for name, owner, purpose in (("a1", ana, "reset"), ("a2", ana, "reset"), ("a3", ana, "verify"),
                                 ("b1", bob, "reset")):
        await store.save_token(name, purpose, owner.id, BASE + HOUR)
    assert await store.take_token("a2", "reset", BASE) == ana.id
    assert await store.take_token("a1", "reset", BASE) is None
    assert await store.take_token("a3", "verify", BASE) == ana.id
    assert await store.take_token("b1", "reset", BASE) == bob.id


async def test_two_requests_with_one_link_get_it_once(store: Store) -> None:
    ana = await store.create_user(user())
    for round_ in range(10):
        await store.save_token(f"t{round_}", "reset", ana.id, BASE + HOUR)
        taken = await asyncio.gather(*(store.take_token(f"t{round_}", "reset", BASE) for _ in range(4)))
        assert taken.count(ana.id) == 1, taken


async def test_deleting_the_user_deletes_its_links(store: Store) -> None:
    ana = await store.create_user(user())
    await store.save_token("h", "reset", ana.id, BASE + HOUR)
    await store.delete_user(ana.id)
    again = await store.create_user(user())
    assert await store.take_token("h", "reset", BASE) is None and again.id != ana.id


async def test_the_unverified_mark_is_stored_and_cleared(store: Store) -> None:
    ana = user()
    ana.unverified = True
    await store.create_user(ana)
    assert (await store.get_user(email=ana.email)).unverified
    ana.unverified = False
    await store.update_user(ana)
    assert not (await store.get_user(user_id=ana.id)).unverified
    assert not [u for u in await store.list_users() if u.unverified]
