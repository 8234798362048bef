"""Server-side sessions of the account web.

The cookie holds 256 random bits; the store keeps only their SHA-256, so every server process and both
backends share sessions, and a copy of the database opens none. A session ends at sign-out, at a
password change (every session of the user), after ``session_idle_minutes`` without a request, and
``session_max_hours`` after sign-in whatever the activity (settings; documented in the README).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime, timedelta

from config.settings import Settings
from store.base import StoreUnavailable
from store.ports import SessionStore
from store.records import Session, User

COOKIE = "ctiwire_session"
# A request refreshes ``last_seen_at`` at most this often: the idle clock needs minutes, not a write per page.
TOUCH_EVERY = timedelta(seconds=60)
# ...and at least every quarter of the idle time, so a session in use never reaches it (1 minute idle: 15 s).
TOUCH_FRACTION = 4


@dataclass(frozen=True, slots=True)
class SignedIn:
    """The session of one request and its user."""

    session: Session
    user: User


def session_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def start(store: SessionStore, user: User, now: datetime) -> str:
    """A new session for ``user`` (a new id at every sign-in: no fixation); returns the cookie value."""
    token = secrets.token_urlsafe(32)
    await store.create_session(Session(id=session_hash(token), user_id=user.id, created_at=now, last_seen_at=now))
    return token


def touch_every(settings: Settings) -> timedelta:
    """How old ``last_seen_at`` may grow before a request refreshes it."""
    return min(TOUCH_EVERY, timedelta(minutes=settings.session_idle_minutes) / TOUCH_FRACTION)


def _expired(session: Session, settings: Settings, now: datetime) -> bool:
    idle = timedelta(minutes=settings.session_idle_minutes)
    absolute = timedelta(hours=settings.session_max_hours)
    return now - session.last_seen_at > idle or now - session.created_at > absolute


async def find(store: SessionStore, settings: Settings, token: str | None, now: datetime) -> SignedIn | None:
    """The live session named by the cookie ``token``, or None (unknown, ended or expired). Not refreshed
    here: a request refused (e.g. by its CSRF check) does not count as use; ``keep_alive`` does that."""
    if not token or len(token) > 128:
        return None
    found = await store.session_with_user(session_hash(token))
    if found is None:
        return None
    session, user = found
    if _expired(session, settings, now):
        await _tidy(store.delete_sessions(session_id=session.id))
        return None
    return SignedIn(session, user)


async def keep_alive(store: SessionStore, settings: Settings, signed_in: SignedIn, now: datetime) -> None:
    """Restart the idle clock of a session in use (not at every request: see ``touch_every``)."""
    if now - signed_in.session.last_seen_at > touch_every(settings):
        await _tidy(store.touch_session(signed_in.session.id, now))


async def _tidy(write: Awaitable[object]) -> None:
    """Bookkeeping a request does on the way (an expired session dropped, a session's last use noted):
    a store that cannot save it (a full disk, an outage) never fails the request, nor sign-out."""
    try:
        await write
    except StoreUnavailable as exc:
        logging.getLogger("ctiwire.web").warning("session bookkeeping not saved: %s", exc)


async def end(store: SessionStore, signed_in: SignedIn) -> None:
    await store.delete_sessions(session_id=signed_in.session.id)
