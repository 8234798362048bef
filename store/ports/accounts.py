"""Accounts: users, their API keys, their web sessions, the links mailed to them and the sign-in throttle's
attempts.

Five small interfaces, one backend object: deleting a user ends its keys and sessions in one step, so a
backend answers them all on one connection (``AccountStore``); callers name the part they use.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from datetime import datetime

from store.records import ApiKey, Session, User
from store.usage import UsageHistory


class UserStore(abc.ABC):
    """Users by id and e-mail (the CLI, sign-up, the account settings)."""

    @abc.abstractmethod
    async def create_user(self, user: User) -> User:
        """Insert a user; Conflict when the e-mail exists."""

    @abc.abstractmethod
    async def get_user(self, *, user_id: str | None = None, email: str | None = None) -> User:
        """One user by id or e-mail; NotFound otherwise."""

    @abc.abstractmethod
    async def list_users(self) -> list[User]:
        """Every user, by e-mail."""

    @abc.abstractmethod
    async def update_user(self, user: User) -> None:
        """Store ``user``'s tier, password hash and ``unverified``; NotFound for an unknown id."""

    @abc.abstractmethod
    async def delete_user(self, user_id: str) -> None:
        """Delete the user, its keys (revoked first: they answer ``expired_api_key``) and its sessions."""


class KeyStore(abc.ABC):
    """API keys: what authenticates every API request (spec, Authentication)."""

    @abc.abstractmethod
    async def create_key(self, key: ApiKey, max_keys: int) -> ApiKey:
        """Insert a key; QuotaExceeded past ``max_keys`` for its user, Conflict on a duplicate name."""

    @abc.abstractmethod
    async def key_by_hash(self, key_hash: str) -> ApiKey | None:
        """The key (active or not) whose hash, or former hash (``previous_hash``), is ``key_hash``, or None."""

    @abc.abstractmethod
    async def key_with_user(self, key_hash: str) -> tuple[ApiKey, User] | None:
        """The key whose hash is ``key_hash`` and its owner, or None: what authenticating a request reads, in
        one read. Backends may share the records between requests: treat them as read-only."""

    @abc.abstractmethod
    async def list_keys(self, user_id: str) -> list[ApiKey]:
        """A user's keys, oldest first."""

    @abc.abstractmethod
    async def delete_key(self, user_id: str, name: str) -> None:
        """Delete by name; NotFound when there is none. Remembers the hash as revoked."""

    @abc.abstractmethod
    async def set_key_active(self, user_id: str, name: str, active: bool) -> None:
        """Activate or deactivate by name; NotFound when there is none. Activating ends ``pending``."""

    @abc.abstractmethod
    async def is_revoked(self, key_hash: str) -> bool:
        """True when a key with this hash existed and was deleted (answers expired_api_key)."""

    @abc.abstractmethod
    async def touch_key(self, key_id: str, at: datetime) -> None:
        """Record when the key was last used (the account web's usage page shows it)."""

    @abc.abstractmethod
    async def set_key_scopes(self, user_id: str, name: str, scopes: list[str]) -> None:
        """Replace the scopes of one key (a downgrade trims them); NotFound for an unknown name."""

    @abc.abstractmethod
    async def rotate_key(self, user_id: str, name: str, key_hash: str, prefix: str,
                         previous_expires_at: datetime) -> ApiKey:
        """A new secret for one key: ``key_hash`` and ``prefix`` replace the key's, whose hash becomes
        ``previous_hash`` until ``previous_expires_at``; the key turns ``pending`` (the new secret works once
        delivered). A former hash still kept is revoked. The updated key; NotFound for an unknown name."""

    @abc.abstractmethod
    async def rename_key(self, user_id: str, name: str, new_name: str) -> None:
        """Rename one key; NotFound for an unknown name, Conflict when ``new_name`` is taken."""


class SessionStore(abc.ABC):
    """The account web's sessions (cookies hold the secret, the store its SHA-256)."""

    @abc.abstractmethod
    async def create_session(self, session: Session) -> None:
        """Store a session (its id is the SHA-256 of the cookie value)."""

    @abc.abstractmethod
    async def session_with_user(self, session_id: str) -> tuple[Session, User] | None:
        """The session and its user, in one read (every page asks)."""

    @abc.abstractmethod
    async def touch_session(self, session_id: str, at: datetime) -> None:
        """Record activity (the idle expiry counts from it)."""

    @abc.abstractmethod
    async def delete_sessions(self, *, session_id: str | None = None, user_id: str | None = None) -> int:
        """End one session, or every session of a user; the number ended."""


class TokenStore(abc.ABC):
    """Single-use links mailed to a user (password reset, address check): only their SHA-256 is kept."""

    @abc.abstractmethod
    async def save_token(self, token_hash: str, purpose: str, user_id: str, expires_at: datetime) -> None:
        """Keep the SHA-256 of a link mailed to ``user_id`` for ``purpose`` (``reset``, ``verify``) until
        ``expires_at``; deleted with the user."""

    @abc.abstractmethod
    async def take_token(self, token_hash: str, purpose: str, now: datetime) -> str | None:
        """Use a mailed link once: atomically delete it and every other ``purpose`` token of its user; the
        user's id when it existed and had not expired at ``now``, else None."""


class AttemptStore(abc.ABC):
    """Sign-in and sign-up attempts, counted atomically for ``web.throttle``."""

    @abc.abstractmethod
    async def reserve_attempt(self, limits: Sequence[tuple[str, int]], since: datetime, at: datetime
                              ) -> datetime | None:
        """Count one attempt at ``at`` for every ``(subject, limit)`` (an account, a client address, all
        sign-ups) only if each subject has fewer than ``limit`` attempts after ``since``: None then. Else
        count nothing and return the newest of the full subjects' ``limit``-th newest attempts (the
        subject is free again when that one leaves the window). Atomic across every process on the store,
        so at most ``limit`` attempts are ever let through: the throttle counts before the work."""

    @abc.abstractmethod
    async def clear_attempts(self, subject: str) -> None:
        """Forget ``subject``'s attempts (an account after its right password)."""


class AccountStore(UserStore, KeyStore, SessionStore, TokenStore, AttemptStore, UsageHistory, abc.ABC):
    """Every account concern, as one backend object answers them."""
