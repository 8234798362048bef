"""Throttled attempts on every backend: counted before the work, atomically, never past a limit."""

from __future__ import annotations

import asyncio

from conformance.factories import at

from store.ports import AccountStore

WINDOW = 15  # minutes


async def reserve(accounts: AccountStore, limits: tuple[tuple[str, int], ...], minute: float) -> object:
    return await accounts.reserve_attempt(limits, at(minute - WINDOW), at(minute))


async def test_attempts_are_counted_up_to_the_limit_then_refused_until_the_oldest_leaves(
        accounts: AccountStore) -> None:
    limits = (("account:ana", 3),)
    assert [await reserve(accounts, limits, m) for m in (0, 1, 2)] == [None, None, None]
    assert await reserve(accounts, limits, 3) == at(0)  # free again when the attempt of minute 0 leaves
    assert await reserve(accounts, limits, 14.9) == at(0)  # a refusal is not counted: still the same wait
    assert await reserve(accounts, limits, 15.5) is None  # minute 0 left the window
    assert await reserve(accounts, limits, 15.6) == at(1)


async def test_an_attempt_counts_for_every_subject_or_for_none(accounts: AccountStore) -> None:
    both = (("account:ana", 5), ("address:10.0.0.1", 2))
    assert await reserve(accounts, both, 0) is None
    assert await reserve(accounts, (("account:bo", 5), ("address:10.0.0.1", 2)), 1) is None
    assert await reserve(accounts, both, 2) == at(0)  # the address is full: ana's account is not charged
    assert [await reserve(accounts, (("account:ana", 2),), m) for m in (3, 4)] == [None, at(0)]


async def test_the_latest_wait_of_the_full_subjects_is_returned(accounts: AccountStore) -> None:
    assert await reserve(accounts, (("a", 1),), 0) is None
    assert await reserve(accounts, (("b", 1),), 5) is None
    assert await reserve(accounts, (("a", 1), ("b", 1)), 6) == at(5)


async def test_clear_forgets_one_subject_only(accounts: AccountStore) -> None:
    assert await reserve(accounts, (("account:ana", 1), ("address:x", 5)), 0) is None
    await accounts.clear_attempts("account:ana")
    assert await reserve(accounts, (("account:ana", 1),), 1) is None
    assert await reserve(accounts, (("address:x", 1),), 1) == at(0)


async def test_racing_attempts_never_pass_the_limit(accounts: AccountStore) -> None:
    limits = (("account:ana", 5), ("address:10.0.0.1", 30))
    results = await asyncio.gather(*(reserve(accounts, limits, 1) for _ in range(40)))
    admitted = [r for r in results if r is None]
    assert 1 <= len(admitted) <= 5
    # the last slots: 20 racing attempts on another account from the same address, 25 slots left there
    others = await asyncio.gather(*(reserve(accounts, (("account:bo", 40), ("address:10.0.0.1", 30)), 2)
                                    for _ in range(40)))
    assert 1 <= sum(r is None for r in others) <= 30 - len(admitted)
