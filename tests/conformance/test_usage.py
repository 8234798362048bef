"""Usage history (store.usage) on every backend: batches add up per key and day, as several processes'
flushes do, and old days go."""

from __future__ import annotations

from store.ports import AccountStore
from store.usage import UsageDay


async def test_batches_add_up_per_key_and_day(accounts: AccountStore) -> None:
    await accounts.add_usage([UsageDay("k1", "2026-11-20", 5, 0), UsageDay("web:u1", "2026-11-20", 2, 1)])
    await accounts.add_usage([UsageDay("k1", "2026-11-20", 3, 2), UsageDay("k1", "2026-11-21", 1, 0),
                              UsageDay("k2", "2026-11-21", 9, 9)])
    assert await accounts.usage_history(["k1", "web:u1"], "2026-11-01") == [
        UsageDay("k1", "2026-11-20", 8, 2), UsageDay("k1", "2026-11-21", 1, 0), UsageDay("web:u1", "2026-11-20", 2, 1)]
    assert await accounts.usage_history(["k1"], "2026-11-21") == [UsageDay("k1", "2026-11-21", 1, 0)]
    assert await accounts.usage_history([], "2026-11-01") == []


async def test_days_past_the_kept_history_go(accounts: AccountStore) -> None:
    await accounts.add_usage([UsageDay("k1", "2026-01-01", 4, 0)])
    await accounts.add_usage([UsageDay("k1", "2026-11-26", 1, 0)])
    assert await accounts.usage_history(["k1"], "2000-01-01") == [UsageDay("k1", "2026-11-26", 1, 0)]
