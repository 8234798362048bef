"""Throttles of the account web, counted in the store so every server process shares them.

Sign-in: per account after a handful of attempts, per client address only after many more, so one
person's typos never lock other accounts behind the same address (an office NAT). Sign-up: per client
address and in total. An attempt is counted *before* the password is hashed or verified, in one atomic
store operation (``AttemptStore.reserve_attempt``): however many requests arrive at once, in however many
processes, at most the limit are ever evaluated. A right password clears its account's count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from store.ports import AttemptStore

WINDOW = timedelta(minutes=15)
ACCOUNT_LIMIT = 5  # sign-in attempts per account in WINDOW
ADDRESS_LIMIT = 30  # sign-in attempts per client address in WINDOW (at least 30 in 15 minutes)
SIGNUP_WINDOW = timedelta(hours=1)
SIGNUP_ADDRESS_LIMIT = 5  # sign-ups per client address in SIGNUP_WINDOW (times settings.signup_limit_scale)
SIGNUP_TOTAL_LIMIT = 100  # sign-ups from everywhere in SIGNUP_WINDOW (times settings.signup_limit_scale)
MAIL_WINDOW = timedelta(hours=1)
MAIL_ACCOUNT_LIMIT = 3  # mailed links per e-mail address in MAIL_WINDOW (forgotten password, address check)
MAIL_ADDRESS_LIMIT = 10  # forgotten-password requests per client address in MAIL_WINDOW


def _account(email: str) -> str:
    return f"account:{email.strip().lower()}"


async def _reserve(store: AttemptStore, limits: Sequence[tuple[str, int]], window: timedelta, now: datetime) -> int:
    """0 when this attempt is counted and may go ahead; else the seconds until one would be."""
    blocking = await store.reserve_attempt(limits, now - window, now)
    return 0 if blocking is None else max(1, math.ceil((blocking + window - now).total_seconds()))


async def sign_in(store: AttemptStore, email: str, address: str, now: datetime) -> int:
    """Count a sign-in for ``email`` from ``address``: 0 to verify its password, else seconds to wait."""
    return await _reserve(store, ((_account(email), ACCOUNT_LIMIT), (f"address:{address}", ADDRESS_LIMIT)),
                          WINDOW, now)


async def sign_up(store: AttemptStore, address: str, now: datetime, scale: int = 1) -> int:
    """Count a sign-up from ``address``: 0 to go ahead, else seconds to wait."""
    limits = ((f"signup-address:{address}", SIGNUP_ADDRESS_LIMIT * scale), ("signup", SIGNUP_TOTAL_LIMIT * scale))
    return await _reserve(store, limits, SIGNUP_WINDOW, now)


async def forgot(store: AttemptStore, email: str, address: str, now: datetime) -> int:
    """Count a forgotten-password request: known and unknown e-mails alike (the answer tells nothing)."""
    limits = ((f"mail:{email.strip().lower()}", MAIL_ACCOUNT_LIMIT), (f"forgot-address:{address}", MAIL_ADDRESS_LIMIT))
    return await _reserve(store, limits, MAIL_WINDOW, now)


async def mail(store: AttemptStore, email: str, now: datetime) -> int:
    """Count a mailed link a signed-in user asks for (a new address check)."""
    return await _reserve(store, ((f"mail:{email.strip().lower()}", MAIL_ACCOUNT_LIMIT),), MAIL_WINDOW, now)


async def succeeded(store: AttemptStore, email: str) -> None:
    """A right password clears the account's count (not the address's: it may be someone else's)."""
    await store.clear_attempts(_account(email))


def describe(seconds: int) -> str:
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}" if seconds > 60 else f"{seconds} seconds"
