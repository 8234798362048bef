"""Mailed single-use links (password reset, address check) on every backend: only the hash is kept, a
link works once and until it expires, using one voids the user's other links of that purpose, two
requests with one link get it once, and deleting the user deletes its links."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from conformance.factories import user

from store.ports import AccountStore
from store.records import utcnow

HOUR = timedelta(hours=1)
# Real time: expired links may be dropped by the store on its own clock (a MongoDB TTL index).
BASE = utcnow()


async def test_a_link_works_once_and_until_it_expires(accounts: AccountStore) -> None:
    ana = await accounts.create_user(user())
    await accounts.save_token("h1", "reset", ana.id, BASE + HOUR)
    assert await accounts.take_token("h1", "verify", BASE) is None  # another purpose: not this link
    assert await accounts.take_token("h1", "reset", BASE) == ana.id
    assert await accounts.take_token("h1", "reset", BASE) is None
    await accounts.save_token("h2", "reset", ana.id, BASE + HOUR)
    assert await accounts.take_token("h2", "reset", BASE + HOUR) is None  # expired at its moment
    assert await accounts.take_token("h2", "reset", BASE) is None  # and used up by the try


async def test_using_a_link_voids_the_users_other_links_of_its_purpose_only(accounts: AccountStore) -> None:
    ana, bob = await accounts.create_user(user()), await accounts.create_user(user("bob@example.com"))
    for name, owner, purpose in (("a1", ana, "reset"), ("a2", ana, "reset"), ("a3", ana, "verify"),
                                 ("b1", bob, "reset")):
        await accounts.save_token(name, purpose, owner.id, BASE + HOUR)
    assert await accounts.take_token("a2", "reset", BASE) == ana.id
    assert await accounts.take_token("a1", "reset", BASE) is None
    assert await accounts.take_token("a3", "verify", BASE) == ana.id
    assert await accounts.take_token("b1", "reset", BASE) == bob.id


async def test_two_requests_with_one_link_get_it_once(accounts: AccountStore) -> None:
    ana = await accounts.create_user(user())
    for round_ in range(10):
        await accounts.save_token(f"t{round_}", "reset", ana.id, BASE + HOUR)
        taken = await asyncio.gather(*(accounts.take_token(f"t{round_}", "reset", BASE) for _ in range(4)))
        assert taken.count(ana.id) == 1, taken


async def test_deleting_the_user_deletes_its_links(accounts: AccountStore) -> None:
    ana = await accounts.create_user(user())
    await accounts.save_token("h", "reset", ana.id, BASE + HOUR)
    await accounts.delete_user(ana.id)
    again = await accounts.create_user(user())
    assert await accounts.take_token("h", "reset", BASE) is None and again.id != ana.id


async def test_the_unverified_mark_is_stored_and_cleared(accounts: AccountStore) -> None:
    ana = user()
    ana.unverified = True
    await accounts.create_user(ana)
    assert (await accounts.get_user(email=ana.email)).unverified
    ana.unverified = False
    await accounts.update_user(ana)
    assert not (await accounts.get_user(user_id=ana.id)).unverified
    assert not [u for u in await accounts.list_users() if u.unverified]
