"""Users and API keys as the account settings (and the CLI) manage them (spec, Authentication 4-5)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from config.tiers import SCOPES, TIERS
from store.apikeys import display_prefix, generate_key, hash_key
from store.base import Store, StoreError
from store.records import ApiKey, User, utcnow


class AccountError(StoreError):
    """A request about users or keys that cannot be honoured (unknown tier or scope)."""


@dataclass(frozen=True, slots=True)
class NewKey:
    """A freshly created key: the only moment the secret exists outside the client."""

    record: ApiKey
    secret: str


async def create_user(store: Store, email: str, tier: str) -> User:
    """Create a user on ``tier`` (``free`` or ``pro``)."""
    if tier not in TIERS:
        raise AccountError(f"unknown tier {tier!r}; choose one of {', '.join(TIERS)}")
    if "@" not in email:
        raise AccountError(f"{email!r} is not an e-mail address")
    return await store.create_user(User(id=str(uuid.uuid4()), email=email.lower(), tier=tier, created_at=utcnow()))


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


async def create_key(store: Store, email: str, name: str, scopes: Sequence[str] | None = None,
                     expires_at: datetime | None = None) -> NewKey:
    """Create a key for the user with ``email``; the quota is the tier's (Free 3, Pro 50)."""
    user = await store.get_user(email=email)
    secret = generate_key()
    record = ApiKey(
        id=str(uuid.uuid4()), user_id=user.id, name=name, key_hash=hash_key(secret),
        prefix=display_prefix(secret), scopes=_scopes_for(user.tier, scopes), created_at=utcnow(),
        expires_at=expires_at,
    )
    await store.create_key(record, TIERS[user.tier].max_keys)
    return NewKey(record=record, secret=secret)
