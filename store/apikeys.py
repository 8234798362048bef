"""API key secrets: generation, hashing and display prefix (spec, Authentication 4).

Only the SHA-256 of a key is stored. A key carries 256 random bits, so a fast hash is enough:
a slow password hash would add latency to every request without adding security.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

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
