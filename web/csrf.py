"""CSRF tokens of the account web, bound to the session (OWASP CSRF cheat sheet, "synchronizer token").

A signed-in form carries HMAC-SHA256(secret_key, "csrf:" + the session's stored id) and a POST must present
exactly it: a token works with one session only, so a token the attacker got with their own session or
cookie (e.g. an ``_xsrf`` cookie planted from a sibling domain, OWASP CSRF cheat sheet, "naive double
submit") is refused with the victim's, and a new session at sign-in makes older tokens void. Forms before
sign-in keep Tornado's ``_xsrf`` cookie token: there is no session to bind to yet.
"""

from __future__ import annotations

import hashlib
import hmac

FIELD = "_xsrf"


def session_token(secret_key: str, session_id: str) -> str:
    """The token of the session stored as ``session_id`` (a SHA-256 of the cookie, never the cookie itself)."""
    return hmac.new(secret_key.encode(), ("csrf:" + session_id).encode(), hashlib.sha256).hexdigest()


def matches(expected: str, presented: str | None) -> bool:
    """Constant-time comparison; an absent or non-ASCII token never matches."""
    if not presented or not presented.isascii():
        return False
    return hmac.compare_digest(expected.encode(), presented.encode())
