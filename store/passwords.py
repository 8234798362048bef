"""Password hashing: argon2id through argon2-cffi with its recommended parameters (RFC 9106), off the loop.

One argon2id hash takes tens of milliseconds of CPU on several lanes, and 64 MiB. Run on the event loop it
would stall every other request of the process, so hashes run in a small thread pool (argon2-cffi releases
the GIL) of half the cores, at a lower CPU priority than the threads serving requests, and only a bounded
number may wait for it: past that, ``Busy``, and the page says to try again rather than queueing without
bound.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from store.base import StoreError

T = TypeVar("T")

MIN_PASSWORD_LENGTH = 12
HASH_THREADS = max(1, (os.cpu_count() or 2) // 2)  # half the cores: the other half keep serving requests
MAX_WAITING = 16 * HASH_THREADS  # hashes admitted beyond the running ones (about a second's wait); more: Busy

_HASHER = PasswordHasher()  # argon2id by default
HASH_NICENESS = 10  # hashing threads yield the CPU to the threads serving requests (the event loop's)


def _lower_priority() -> None:
    """Run the calling pool thread (and the lane threads argon2 starts from it) at a lower priority: on
    Linux ``setpriority`` on a thread id applies to that thread alone, and new threads inherit it."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), HASH_NICENESS)
    except (AttributeError, OSError):  # not Linux, or not allowed: the bounded pool still applies
        pass


_POOL = ThreadPoolExecutor(max_workers=HASH_THREADS, thread_name_prefix="argon2", initializer=_lower_priority)
_admitted = [0]  # hashes running or waiting; only ever touched on an event loop's thread
_DUMMY: list[str] = []  # a hash to verify against for an unknown e-mail: same work, same time


class Busy(StoreError):
    """Too many password hashes are waiting already: try again in a moment."""


async def _off_loop(fn: Callable[[], T]) -> T:
    if _admitted[0] >= HASH_THREADS + MAX_WAITING:
        raise Busy("The service is busy checking passwords. Try again in a moment.")
    _admitted[0] += 1
    try:
        return await asyncio.get_running_loop().run_in_executor(_POOL, fn)
    finally:
        _admitted[0] -= 1


def too_short(password: str) -> str | None:
    """Why ``password`` cannot be used, or None."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"Choose a password of at least {MIN_PASSWORD_LENGTH} characters."
    return None


async def hash_password(password: str) -> str:
    return await _off_loop(lambda: _HASHER.hash(password))


def _verify(stored: str | None, password: str) -> bool:
    if not _DUMMY:
        _DUMMY.append(_HASHER.hash(secrets.token_urlsafe(16)))
    try:
        return _HASHER.verify(stored or _DUMMY[0], password) and stored is not None
    except (VerificationError, InvalidHashError):
        return False


async def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches ``stored``; None (no such user) verifies a dummy hash: the same work."""
    return await _off_loop(lambda: _verify(stored, password))


def needs_rehash(stored: str) -> bool:
    return _HASHER.check_needs_rehash(stored)
