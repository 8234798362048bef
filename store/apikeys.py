"""API key secrets: generation, hashing and display prefix (spec, Authentication 4).

Only the SHA-256 of a key is stored. A key carries 256 random bits, so a fast hash is enough:
a slow password hash would add latency to every request without adding security.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime

from store.records import ApiKey

KEY_PREFIX = "sk_live_"
_SECRET_BYTES = 32


def generate_key() -> str:
    """A new secret: ``sk_live_`` + 32 random bytes, URL-safe base64."""
    return KEY_PREFIX + secrets.token_urlsafe(_SECRET_BYTES)


def hash_key(raw: str) -> str:
    """The stored form of a key."""
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def display_prefix(raw: str) -> str:
    """What ``keys list`` shows: the fixed prefix and four characters, never enough to guess the rest."""
    return raw[: len(KEY_PREFIX) + 4] + "…"


def hashes_equal(a: str, b: str) -> bool:
    """Constant-time comparison of two key hashes."""
    return hmac.compare_digest(a.encode(), b.encode())


def looks_like_key(raw: str) -> bool:
    """True when ``raw`` has the shape of a ctiwire key (cheap pre-check before a lookup)."""
    return raw.startswith(KEY_PREFIX) and 16 <= len(raw) <= 200


def matches(key: ApiKey, digest: str) -> bool:
    """True when ``digest`` is the key's hash or, after a rotation, its former one (both compared)."""
    current = hashes_equal(key.key_hash, digest)
    former = hashes_equal(key.previous_hash or "", digest)
    return current or former


def works(key: ApiKey, digest: str, now: datetime) -> bool:
    """Whether the secret hashed to ``digest`` (one that :func:`matches`) authenticates at ``now``: the key
    active and unexpired; the current secret once delivered, the former one until its grace ends."""
    if hashes_equal(key.key_hash, digest):
        usable, ends = not key.pending, [key.expires_at]
    else:
        usable, ends = True, [key.expires_at, key.previous_expires_at]
    return key.active and usable and all(end is None or now < end for end in ends)
