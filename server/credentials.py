"""Where a request carries its API key, and the ``WWW-Authenticate`` challenge of a 401.

Spec, Authentication 2-3: ``Authorization: Bearer <KEY>``, ``X-API-Key`` or the ``api_key`` parameter.
TAXII and the exports also take HTTP Basic (RFC 7617) with any user name and the key as the password,
because SIEM connectors (Microsoft Sentinel's "Threat Intelligence - TAXII", Sumo Logic's TAXII source,
OpenCTI) are configured with a user name and a password. The decoded password goes to the same key
lookup as a Bearer key: same hashing, constant-time comparison, scopes and rate limits.

Neither a key nor any part of a malformed header ever appears in an error message: the message names
what was wrong, never what was sent.
"""

from __future__ import annotations

import base64
import binascii

from server.errors import AuthError
from store.apikeys import looks_like_key

BEARER = "bearer "
BASIC = "basic "


def _malformed(problem: str) -> AuthError:
    return AuthError(
        f"malformed Basic credentials: {problem}; send the API key as the password (any user name)",
        code="invalid_api_key",
    )


def basic_password(credentials: str) -> str:
    """The API key in Basic ``credentials`` (the base64 of ``user:password``): the password, or, when the
    password is empty, a key-shaped user name (``curl -u KEY:``, as other key-based APIs document it)."""
    try:
        decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        raise _malformed("not base64 of UTF-8 text") from None  # no chained error quotes the bytes
    user, colon, password = decoded.partition(":")
    if not colon:
        raise _malformed("no ':' between user name and password")
    if not password and looks_like_key(user):
        return user
    return password.strip()


def key_from_headers(authorization: str, api_key_header: str, basic: bool) -> str:
    """The key in ``Authorization`` (Bearer, or Basic when ``basic``) or ``X-API-Key``; '' when none."""
    scheme = authorization[:7].lower()
    if scheme == BEARER and authorization[7:].strip():
        return authorization[7:].strip()
    if basic and scheme[:6] == BASIC and authorization[6:].strip():
        return basic_password(authorization[6:])
    return api_key_header.strip()


def challenges(realm: str, code: str, basic: bool) -> list[str]:
    """The ``WWW-Authenticate`` values of a 401 (RFC 9110 section 11.6.1): Bearer (RFC 6750 section 3,
    ``invalid_token`` when a key was sent), and Basic (RFC 7617 section 2) where it is accepted."""
    problem = "" if code == "missing_api_key" else ', error="invalid_token"'
    found = [f'Bearer realm="{realm}"{problem}']
    if basic:
        found.append(f'Basic realm="{realm}", charset="UTF-8"')
    return found
