"""Opaque, signed paging tokens: article cursors and TAXII ``next`` (ARCHITECTURE.md, "A request").

A token is ``base64url(json payload) . base64url(HMAC-SHA256)`` under the server secret. The payload
names what it belongs to (``kind``, the sort or the filters), so a token cannot be replayed against
another sort or collection, and a flipped byte fails the signature. No paging state lives in memory:
any server process sharing the secret serves the next page.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from typing import Any

import orjson


class InvalidToken(ValueError):
    """The token is malformed, its signature does not match, or it belongs to something else."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(secret: str, body: str) -> str:
    return _b64(hmac.new(secret.encode(), body.encode("ascii"), hashlib.sha256).digest())


def sign(secret: str, kind: str, payload: dict[str, Any]) -> str:
    """A token carrying ``payload`` for ``kind`` (e.g. ``cursor:published:desc``)."""
    body = _b64(orjson.dumps({"k": kind, "p": payload}, option=orjson.OPT_SORT_KEYS))
    return f"{body}.{_mac(secret, body)}"


def verify(secret: str, kind: str, token: str) -> dict[str, Any]:
    """The payload of ``token``; InvalidToken unless it is intact and was made for ``kind``."""
    body, _, mac = token.partition(".")
    try:
        if not body or not hmac.compare_digest(_mac(secret, body), mac):
            raise InvalidToken("signature mismatch")
        decoded = orjson.loads(_unb64(body))
    except (UnicodeError, ValueError, TypeError, binascii.Error) as exc:
        raise InvalidToken(str(exc)) from exc
    if not isinstance(decoded, dict) or decoded.get("k") != kind or not isinstance(decoded.get("p"), dict):
        raise InvalidToken(f"not a token for {kind}")
    payload: dict[str, Any] = decoded["p"]
    return payload
