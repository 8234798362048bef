"""Users and API keys as the account settings (and the CLI) manage them (spec, Authentication 4-5)."""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from config.tiers import SCOPES, TIERS
from store import passwords
from store.apikeys import display_prefix, generate_key, hash_key
from store.base import NotFound, StoreError
from store.ports import AccountStore, KeyStore, TokenStore, UserStore
from store.records import ApiKey, User, utcnow

EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s]{1,255}")
# How long a rotated key's former secret keeps working, by the name the web form and the CLI use.
GRACES = {"none": timedelta(0), "1h": timedelta(hours=1), "24h": timedelta(hours=24)}
EXPIRY_WARNING = timedelta(days=7)  # keys expiring sooner are flagged in the list and on the usage page
MAX_KEY_NAME = 100
# How long a mailed link works (OWASP Forgot Password cheat sheet: short-lived, single use).
TOKEN_LIFETIMES = {"reset": timedelta(minutes=30), "verify": timedelta(days=2)}
UNVERIFIED = "Confirm your e-mail address first: follow the link we sent you (or ask for a new one)."


class AccountError(StoreError):
    """A request about users or keys that cannot be honoured (unknown tier or scope)."""


@dataclass(frozen=True, slots=True)
class NewKey:
    """A freshly created key: the only moment the secret exists outside the client."""

    record: ApiKey
    secret: str


def check_new_user(email: str, tier: str, password: str | None = None) -> None:
    """AccountError when a user with these values cannot be created (before any work is spent on it)."""
    if tier not in TIERS:
        raise AccountError(f"unknown tier {tier!r}; choose one of {', '.join(TIERS)}")
    if not EMAIL.fullmatch(email):
        raise AccountError(f"{email!r} is not an e-mail address")
    if password is not None:
        check_password_length(password)


def check_password_length(password: str) -> None:
    if why := passwords.too_short(password):
        raise AccountError(why)


async def create_user(store: UserStore, email: str, tier: str, password: str | None = None,
                      unverified: bool = False) -> User:
    """Create a user on ``tier`` (``free`` or ``pro``), with a password when given (the account web's sign-up);
    ``unverified`` until the e-mail's link is followed (``CTIWIRE_SIGNUP=verify``)."""
    check_new_user(email, tier, password)
    password_hash = None if password is None else await passwords.hash_password(password)
    return await store.create_user(User(id=str(uuid.uuid4()), email=email.lower(), tier=tier, created_at=utcnow(),
                                        password_hash=password_hash, unverified=unverified))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def issue_token(store: TokenStore, user: User, purpose: str) -> str:
    """A single-use link secret (256 random bits) for ``purpose``; only its SHA-256 is stored."""
    token = secrets.token_urlsafe(32)
    await store.save_token(token_hash(token), purpose, user.id, utcnow() + TOKEN_LIFETIMES[purpose])
    return token


async def redeem_token(store: AccountStore, token: str, purpose: str) -> User | None:
    """The user a live ``purpose`` link belongs to, the link used up; None for an unknown, used or old one."""
    if not token or len(token) > 128:
        return None
    user_id = await store.take_token(token_hash(token), purpose, utcnow())
    try:
        return None if user_id is None else await store.get_user(user_id=user_id)
    except NotFound:
        return None


async def mark_verified(store: UserStore, user: User) -> None:
    user.unverified = False
    await store.update_user(user)


def _scopes_for(tier: str, requested: Sequence[str] | None) -> list[str]:
    """Requested scopes, or the tier's defaults; a key never holds a scope its tier lacks."""
    allowed = TIERS[tier].scopes
    if not requested:
        return list(allowed)
    unknown = [s for s in requested if s not in SCOPES]
    if unknown:
        raise AccountError(f"unknown scope(s): {', '.join(unknown)}; known: {', '.join(SCOPES)}")
    beyond = [s for s in requested if s not in allowed]
    if beyond:
        raise AccountError(f"the {tier} plan does not include: {', '.join(beyond)}")
    return list(dict.fromkeys(requested))


async def create_key(store: AccountStore, email: str, name: str, scopes: Sequence[str] | None = None,
                     expires_at: datetime | None = None) -> NewKey:
    """Create a key for the user with ``email``; the quota is the tier's (Free 3, Pro 50). The key is saved
    pending (inactive): call :func:`deliver_key` once its secret has been handed out."""
    user = await store.get_user(email=email)
    if user.unverified:
        raise AccountError(UNVERIFIED)
    secret = generate_key()
    record = ApiKey(
        id=str(uuid.uuid4()), user_id=user.id, name=name, key_hash=hash_key(secret),
        prefix=display_prefix(secret), scopes=_scopes_for(user.tier, scopes), created_at=utcnow(),
        expires_at=expires_at, active=False, pending=True,
    )
    await store.create_key(record, TIERS[user.tier].max_keys)
    return NewKey(record=record, secret=secret)


async def rotate_key(store: AccountStore, email: str, name: str, grace: str = "none",
                     now: datetime | None = None) -> NewKey:
    """A new secret for the key ``name``; the old one works for ``grace`` more (``GRACES``), then answers
    ``expired_api_key``. Pending like a new key: call :func:`deliver_key` once the secret was handed out."""
    if grace not in GRACES:
        raise AccountError(f"unknown grace period {grace!r}; choose one of {', '.join(GRACES)}")
    user = await store.get_user(email=email)
    key = next((k for k in await store.list_keys(user.id) if k.name == name), None)
    if key is not None and not key.active and not key.pending:
        raise AccountError(f"key {name!r} is deactivated: activate it before rotating it")
    secret = generate_key()
    record = await store.rotate_key(user.id, name, hash_key(secret), display_prefix(secret),
                                    (now or utcnow()) + GRACES[grace])
    return NewKey(record=record, secret=secret)


def key_name(name: str) -> str:
    """A key's name as typed, trimmed; refused when empty or too long."""
    name = name.strip()
    if not name or len(name) > MAX_KEY_NAME:
        raise AccountError(f"A key's name has 1 to {MAX_KEY_NAME} characters.")
    return name


async def rename_key(store: AccountStore, email: str, name: str, new_name: str) -> str:
    """Rename the key ``name``; the name it now has (trimmed)."""
    user = await store.get_user(email=email)
    new_name = key_name(new_name)
    if new_name != name:
        await store.rename_key(user.id, name, new_name)
    return new_name


def _chosen_scopes(tier: str, scopes: Sequence[str]) -> list[str]:
    """Scopes chosen for an existing key: at least one, each of ``tier``."""
    if not scopes:
        raise AccountError("Choose at least one scope.")
    return _scopes_for(tier, scopes)


async def set_scopes(store: AccountStore, email: str, name: str, scopes: Sequence[str]) -> list[str]:
    """Give the key ``name`` these scopes (at least one, each of the user's tier); the scopes it now has."""
    user = await store.get_user(email=email)
    kept = _chosen_scopes(user.tier, scopes)
    await store.set_key_scopes(user.id, name, kept)
    return kept


async def edit_key(store: AccountStore, email: str, name: str, new_name: str, scopes: Sequence[str]) -> str:
    """Rename the key ``name`` and replace its scopes, both checked before either is written; the new name."""
    user = await store.get_user(email=email)
    key_name(new_name)
    _chosen_scopes(user.tier, scopes)
    saved = await rename_key(store, email, name, new_name)
    await set_scopes(store, email, saved, scopes)
    return saved


async def deliver_key(store: KeyStore, new: NewKey) -> None:
    """The secret of ``new`` was printed or shown: the key works from now on."""
    await store.set_key_active(new.record.user_id, new.record.name, True)
    new.record.active, new.record.pending = True, False


async def check_password(store: UserStore, email: str, password: str) -> User | None:
    """The user when ``password`` is theirs, else None; an unknown e-mail costs the same argon2 work.
    A hash made with older parameters is replaced on success (rehash when parameters change)."""
    try:
        user: User | None = await store.get_user(email=email)
    except NotFound:
        user = None
    stored = user.password_hash if user is not None else None
    if not await passwords.verify_password(stored, password) or user is None or stored is None:
        return None
    if passwords.needs_rehash(stored):
        user.password_hash = await passwords.hash_password(password)
        await store.update_user(user)
    return user


async def set_password(store: AccountStore, email: str, password: str) -> User:
    """A new password; every session of the user ends (a stolen session dies with the old password)."""
    check_password_length(password)
    user = await store.get_user(email=email)
    user.password_hash = await passwords.hash_password(password)
    await store.update_user(user)
    await store.delete_sessions(user_id=user.id)
    return user


async def set_tier(store: AccountStore, email: str, tier: str) -> list[str]:
    """Move a user to ``tier``. A downgrade trims every key's scopes to the new tier's and is refused while
    the user holds more keys than the new quota. Returns one line per key whose scopes changed."""
    if tier not in TIERS:
        raise AccountError(f"unknown tier {tier!r}; choose one of {', '.join(TIERS)}")
    user = await store.get_user(email=email)
    keys, quota = await store.list_keys(user.id), TIERS[tier].max_keys
    if len(keys) > quota:
        raise AccountError(f"{email} holds {len(keys)} API keys and the {tier} plan allows {quota}: "
                           f"delete {len(keys) - quota} first (ctiwire keys delete {email} NAME)")
    trimmed = []
    for key in keys:
        kept = [scope for scope in key.scopes if scope in TIERS[tier].scopes]
        if kept != key.scopes:
            await store.set_key_scopes(user.id, key.name, kept)
            trimmed.append(f"key {key.name!r}: scopes now {', '.join(kept) or 'none'}")
    user.tier = tier
    await store.update_user(user)
    return trimmed


def key_state(key: ApiKey, now: datetime) -> str:
    """``active``, ``deactivated``, ``expired`` or ``never delivered`` (saved, but its secret was never
    handed out, so it does not authenticate): what the API would make of the key now."""
    if key.pending:  # a new key, or a rotation's new secret, never handed out
        return "never delivered"
    if not key.active:
        return "deactivated"
    return "expired" if key.expires_at is not None and key.expires_at <= now else "active"


def expires_soon(key: ApiKey, now: datetime) -> bool:
    """True when the key still works but expires within ``EXPIRY_WARNING``: time to make or rotate one."""
    return key.expires_at is not None and now < key.expires_at <= now + EXPIRY_WARNING
