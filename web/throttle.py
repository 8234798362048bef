"""Sign-in throttling (issue 14): per account after a handful of failures, per client address only after
many more, so one person's typos never lock other accounts behind the same address (an office NAT).

Failures are kept in the store, so every server process counts the same attempts. While an account is
throttled even its right password is refused, and the page says how long to wait.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from store.base import Store

WINDOW = timedelta(minutes=15)
ACCOUNT_LIMIT = 5  # failures per account in WINDOW
ADDRESS_LIMIT = 30  # failures per client address in WINDOW (the issue: at least 30 in 15 minutes)


def _subjects(email: str, address: str) -> tuple[tuple[str, int], tuple[str, int]]:
    return (f"account:{email.strip().lower()}", ACCOUNT_LIMIT), (f"address:{address}", ADDRESS_LIMIT)


async def wait_seconds(store: Store, email: str, address: str, now: datetime) -> int:
    """Seconds until a sign-in for ``email`` from ``address`` is considered again (0: now)."""
    wait = 0.0
    for subject, limit in _subjects(email, address):
        failures = await store.login_failures(subject, now - WINDOW)
        if len(failures) >= limit:  # free again when the oldest failure that counts leaves the window
            wait = max(wait, (failures[-limit] + WINDOW - now).total_seconds())
    return math.ceil(wait)


async def failed(store: Store, email: str, address: str, now: datetime) -> None:
    for subject, _ in _subjects(email, address):
        await store.note_login_failure(subject, now)
    await store.prune_login_failures(now - WINDOW)


async def succeeded(store: Store, email: str) -> None:
    """A right password clears the account's failures (not the address's: they may be someone else's)."""
    await store.clear_login_failures(_subjects(email, "")[0][0])


def describe(seconds: int) -> str:
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}" if seconds > 60 else f"{seconds} seconds"
