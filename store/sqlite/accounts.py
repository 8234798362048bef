"""Accounts on SQLite: users with their passwords and tiers, API keys, sessions, throttled attempts.

Every write is one transaction (``SqliteStore._write``); deleting a user revokes its
keys first, so a deleted account's key answers ``expired_api_key`` like any deleted key.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

import orjson

from store.base import Conflict, NotFound, QuotaExceeded
from store.codec import from_doc
from store.ports import AccountStore
from store.records import ApiKey, Session, User, iso, parse_iso, utcnow
from store.sqlite.part import _json
from store.sqlite.usage import SqliteUsage

T = TypeVar("T")
# Attempts older than any throttle's window (the longest is an hour) no longer count anywhere.
KEEP_ATTEMPTS = timedelta(days=1)

_SESSION_WITH_USER = ("SELECT s.id, s.user_id, s.created_at, s.last_seen_at, u.email, u.tier, u.created_at, "
                      "u.password_hash, u.unverified FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ?")


def user_of(row: sqlite3.Row) -> User:
    """A ``users`` row as a record (``unverified`` is NULL in rows older than the column: verified)."""
    return from_doc(User, {**dict(row), "unverified": bool(row["unverified"])})


def _limit_th(db: sqlite3.Connection, subject: str, limit: int, since: datetime) -> datetime | None:
    """The ``limit``-th newest attempt of ``subject`` after ``since``; None while there are fewer."""
    row = db.execute("SELECT at FROM attempts WHERE subject = ? AND at > ? ORDER BY at DESC LIMIT 1 OFFSET ?",
                     (subject, iso(since), limit - 1)).fetchone()
    return None if row is None else parse_iso(row[0])


def revoke(db: sqlite3.Connection, *key_hashes: str | None) -> None:
    """Remember deleted or replaced secrets: they answer ``expired_api_key``, not ``invalid_api_key``."""
    db.executemany("INSERT OR REPLACE INTO revoked_keys VALUES (?, ?)",
                   [(key_hash, iso(utcnow())) for key_hash in key_hashes if key_hash is not None])


class SqliteAccounts(SqliteUsage, AccountStore):
    """Users, API keys, sessions, mailed links and throttled attempts (one object: deleting a user ends its
    keys, sessions and links)."""

    async def create_user(self, user: User) -> User:
        def insert(db: sqlite3.Connection) -> None:
            db.execute("INSERT INTO users (id, email, tier, created_at, password_hash, unverified) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (user.id, user.email.lower(), user.tier, iso(user.created_at),
                                                     user.password_hash, int(user.unverified)))

        try:
            await self._run(lambda db: self._write(db, insert))
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"a user with e-mail {user.email!r} exists") from exc
        return user

    async def get_user(self, *, user_id: str | None = None, email: str | None = None) -> User:
        column, value = ("id", user_id) if user_id is not None else ("email", (email or "").lower())
        row = await self._point(f"SELECT * FROM users WHERE {column} = ?", (value,))
        if row is None:
            raise NotFound(f"no user with {column} {value!r}")
        return user_of(row)

    async def create_key(self, key: ApiKey, max_keys: int) -> ApiKey:
        def insert(db: sqlite3.Connection) -> None:
            count = db.execute("SELECT count(*) FROM api_keys WHERE user_id = ?", (key.user_id,)).fetchone()[0]
            if count >= max_keys:
                raise QuotaExceeded(f"this plan allows at most {max_keys} API keys")
            db.execute(
                f"INSERT INTO api_keys ({', '.join(_KEY_COLUMNS)}) VALUES ({', '.join('?' * len(_KEY_COLUMNS))})",
                (key.id, key.user_id, key.name, key.key_hash, key.prefix, _json(key.scopes).decode(),
                 iso(key.created_at), int(key.active), key.expires_at and iso(key.expires_at), None,
                 int(key.pending), None, None),
            )

        try:
            await self._run(lambda db: self._write(db, insert))
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"a key named {key.name!r} exists") from exc
        return key

    @staticmethod
    def _key(row: sqlite3.Row | dict[str, Any]) -> ApiKey:
        doc = dict(row)
        doc["scopes"] = orjson.loads(doc["scopes"])
        doc["active"] = bool(doc["active"])
        doc["pending"] = bool(doc.get("pending"))
        return from_doc(ApiKey, doc)

    async def key_by_hash(self, key_hash: str) -> ApiKey | None:
        row = await self._point("SELECT * FROM api_keys WHERE key_hash = ?1 OR previous_hash = ?1", (key_hash,))
        return None if row is None else self._key(row)

    async def key_with_user(self, key_hash: str) -> tuple[ApiKey, User] | None:
        # Every authenticated request asks; the answer is remembered until the next commit to the file.
        return self._remembered(_KEY_WITH_USER, (key_hash,), lambda row: None if row is None else _key_and_user(row))

    async def list_keys(self, user_id: str) -> list[ApiKey]:
        rows = await self._all(
            "SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, name", (user_id,))
        return [self._key(r) for r in rows]

    async def delete_key(self, user_id: str, name: str) -> None:
        def delete(db: sqlite3.Connection) -> int:
            row = db.execute("SELECT key_hash, previous_hash FROM api_keys WHERE user_id = ? AND name = ?",
                             (user_id, name)).fetchone()
            if row is None:
                return 0
            revoke(db, *row)
            return db.execute("DELETE FROM api_keys WHERE user_id = ? AND name = ?", (user_id, name)).rowcount

        if not await self._run(lambda db: self._write(db, delete)):
            raise NotFound(f"no key named {name!r}")

    async def set_key_active(self, user_id: str, name: str, active: bool) -> None:
        changed = await self._run(lambda db: self._write(db, lambda d: d.execute(
            "UPDATE api_keys SET active = ?, pending = CASE WHEN ? THEN 0 ELSE pending END "
            "WHERE user_id = ? AND name = ?", (int(active), int(active), user_id, name)).rowcount))
        if not changed:
            raise NotFound(f"no key named {name!r}")

    async def is_revoked(self, key_hash: str) -> bool:
        row = await self._point("SELECT 1 FROM revoked_keys WHERE key_hash = ?", (key_hash,))
        return row is not None

    async def _change(self, sql: str, params: tuple[Any, ...]) -> int:
        """One statement in its own transaction; the number of rows it changed."""
        return await self._run(lambda db: self._write(db, lambda d: d.execute(sql, params).rowcount))

    async def list_users(self) -> list[User]:
        rows = await self._run(lambda db: db.execute("SELECT * FROM users ORDER BY email").fetchall())
        return [user_of(row) for row in rows]

    async def update_user(self, user: User) -> None:
        changed = await self._change("UPDATE users SET tier = ?, password_hash = ?, unverified = ? WHERE id = ?",
                                     (user.tier, user.password_hash, int(user.unverified), user.id))
        if not changed:
            raise NotFound(f"no user with id {user.id!r}")

    async def delete_user(self, user_id: str) -> None:
        def delete(db: sqlite3.Connection) -> int:
            for row in db.execute("SELECT key_hash, previous_hash FROM api_keys WHERE user_id = ?", (user_id,)):
                revoke(db, *row)
            return db.execute("DELETE FROM users WHERE id = ?", (user_id,)).rowcount  # keys, sessions cascade

        if not await self._run(lambda db: self._write(db, delete)):
            raise NotFound(f"no user with id {user_id!r}")

    async def create_session(self, session: Session) -> None:
        await self._change("INSERT INTO sessions VALUES (?, ?, ?, ?)",
                           (session.id, session.user_id, iso(session.created_at), iso(session.last_seen_at)))

    async def session_with_user(self, session_id: str) -> tuple[Session, User] | None:
        row = await self._point(_SESSION_WITH_USER, (session_id,))
        if row is None:
            return None
        sid, user_id, created, seen, email, tier, user_created, password_hash, unverified = tuple(row)
        return (Session(sid, user_id, parse_iso(created), parse_iso(seen)),
                User(user_id, email, tier, parse_iso(user_created), password_hash, bool(unverified)))

    async def touch_session(self, session_id: str, at: datetime) -> None:
        await self._change("UPDATE sessions SET last_seen_at = ? WHERE id = ?", (iso(at), session_id))

    async def delete_sessions(self, *, session_id: str | None = None, user_id: str | None = None) -> int:
        column, value = ("id", session_id) if session_id is not None else ("user_id", user_id)
        return await self._change(f"DELETE FROM sessions WHERE {column} = ?", (value,))

    async def save_token(self, token_hash: str, purpose: str, user_id: str, expires_at: datetime) -> None:
        def save(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM mail_tokens WHERE expires_at <= ?", (iso(utcnow()),))
            db.execute("INSERT INTO mail_tokens VALUES (?, ?, ?, ?)", (token_hash, purpose, user_id, iso(expires_at)))

        await self._run(lambda db: self._write(db, save))

    async def take_token(self, token_hash: str, purpose: str, now: datetime) -> str | None:
        def take(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT user_id, expires_at FROM mail_tokens WHERE hash = ? AND purpose = ?",
                             (token_hash, purpose)).fetchone()
            if row is None:
                return None
            db.execute("DELETE FROM mail_tokens WHERE user_id = ? AND purpose = ?", (row[0], purpose))
            return str(row[0]) if parse_iso(row[1]) > now else None

        return await self._run(lambda db: self._write(db, take))

    async def reserve_attempt(self, limits: Sequence[tuple[str, int]], since: datetime, at: datetime
                              ) -> datetime | None:
        # One BEGIN IMMEDIATE transaction (``_write``): every process on the file takes the write lock in
        # turn, so the count and the insert of one attempt never interleave with another's.
        def reserve(db: sqlite3.Connection) -> datetime | None:
            db.execute("DELETE FROM attempts WHERE at <= ?", (iso(at - KEEP_ATTEMPTS),))
            full = [_limit_th(db, subject, limit, since) for subject, limit in limits]
            if any(when is not None for when in full):
                return max(when for when in full if when is not None)
            db.executemany("INSERT INTO attempts VALUES (?, ?)", [(subject, iso(at)) for subject, _ in limits])
            return None

        return await self._run(lambda db: self._write(db, reserve))

    async def clear_attempts(self, subject: str) -> None:
        await self._change("DELETE FROM attempts WHERE subject = ?", (subject,))

    async def touch_key(self, key_id: str, at: datetime) -> None:
        await self._change("UPDATE api_keys SET last_used_at = ? WHERE id = ?", (iso(at), key_id))

    async def set_key_scopes(self, user_id: str, name: str, scopes: list[str]) -> None:
        changed = await self._change("UPDATE api_keys SET scopes = ? WHERE user_id = ? AND name = ?",
                                     (orjson.dumps(scopes).decode(), user_id, name))
        if not changed:
            raise NotFound(f"no key named {name!r}")

    async def rotate_key(self, user_id: str, name: str, key_hash: str, prefix: str,
                         previous_expires_at: datetime) -> ApiKey:
        def rotate(db: sqlite3.Connection) -> sqlite3.Row | None:
            row = db.execute("SELECT previous_hash FROM api_keys WHERE user_id = ? AND name = ?",
                             (user_id, name)).fetchone()
            if row is None:
                return None
            revoke(db, row[0])  # the secret before the previous one: its grace ends now
            return db.execute(  # type: ignore[no-any-return]
                "UPDATE api_keys SET previous_hash = key_hash, previous_expires_at = ?, key_hash = ?, prefix = ?, "
                "pending = 1 WHERE user_id = ? AND name = ? RETURNING *",
                (iso(previous_expires_at), key_hash, prefix, user_id, name)).fetchone()

        row = await self._run(lambda db: self._write(db, rotate))
        if row is None:
            raise NotFound(f"no key named {name!r}")
        return self._key(row)

    async def rename_key(self, user_id: str, name: str, new_name: str) -> None:
        try:
            changed = await self._change("UPDATE api_keys SET name = ? WHERE user_id = ? AND name = ?",
                                         (new_name, user_id, name))
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"a key named {new_name!r} exists") from exc
        if not changed:
            raise NotFound(f"no key named {name!r}")

_KEY_COLUMNS = ("id", "user_id", "name", "key_hash", "prefix", "scopes", "created_at", "active", "expires_at",
                "last_used_at", "pending", "previous_hash", "previous_expires_at")
_KEY_WITH_USER = (f"SELECT {', '.join('k.' + c for c in _KEY_COLUMNS)}, u.email, u.tier, u.created_at "
                  "FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?1 OR k.previous_hash = ?1")


def _key_and_user(row: sqlite3.Row) -> tuple[ApiKey, User]:
    n = len(_KEY_COLUMNS)
    key = SqliteAccounts._key(dict(zip(_KEY_COLUMNS, row[:n], strict=True)))
    email, tier, created_at = row[n:]
    return key, User(key.user_id, email, tier, parse_iso(created_at))
